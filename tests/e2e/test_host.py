"""The sandbox and the host's files, in the real CLI with bubblewrap installed: what the host keeps
under /tmp (a program, a venv, a data file) is there in a sandboxed call as outside; what a call
writes to /tmp is there for the job's next call, in a step with `writes` and in one without; the
host's /tmp does not change; a `baton` call chained with work that writes to /tmp reaches the job
through the broker while the work's file stays in the job's /tmp; ordinary work in a step with
`writes` runs (git commit of the step's files, mktemp); and sandboxed calls leave no empty folders
in the project.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any, Dict

import gatemodes

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import Turns, baton, ledger, results_by_id, write_plan

PLAN = {"job": "e2e-host", "steps": [{"id": "build", "writes": ["src/**"]}, {"id": "look", "writes": []}]}


def bash(call_id: str, command: str) -> Dict[str, Any]:
    return tool_use("Bash", {"command": command, "description": call_id}, id=call_id)


def outputs(fake_api: FakeAPI) -> Dict[str, str]:
    seen: Dict[str, str] = {}
    for request in fake_api.requests_main():
        seen.update({k: v.text for k, v in results_by_id(request).items()})
    return seen


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True,
                          capture_output=True, text=True).stdout


def host_files(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_hosts_tmp_is_there_and_what_a_call_writes_to_tmp_is_the_jobs(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    host = tmp_path / "hostdata"  # under the host's /tmp, outside the project and the home folder
    (host / "venv" / "bin").mkdir(parents=True)
    (host / "data.txt").write_text("host data\n")
    (host / "gone.txt").write_text("still here\n")
    tool = host / "venv" / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    before = host_files(host)
    scratch = f"/tmp/baton-e2e-{uuid.uuid4().hex}.txt"
    write_plan(project, PLAN)
    fake_api.script = Turns(
        [text("reading"), bash("read", f"cat {host}/data.txt && {tool}")],
        [bash("write", f"echo kept > {scratch} && echo edited >> {host}/data.txt && rm {host}/gone.txt")],
        [bash("again", f"cat {scratch} {host}/data.txt; ls {host}")],
        [bash("mktemp", 'f=$(mktemp) && echo temporary > "$f" && cat "$f"')],
        [text("done")])

    run = claude.run("do step build", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    seen = outputs(fake_api)
    assert seen["read"].split() == ["host", "data", "tool", "ran"], seen["read"]
    assert seen["again"].split() == ["kept", "host", "data", "edited", "data.txt", "venv"], seen["again"]
    assert seen["mktemp"].strip() == "temporary", seen["mktemp"]
    assert host_files(host) == before and not Path(scratch).exists()  # the host's /tmp is as it was
    told = all_text_of(fake_api.requests_main()[2])  # the Read tool reads the host's /tmp: where the file is
    kept = next(Path(claude.home, ".cache/baton/jobs").glob("*/tmp")) / scratch[len("/tmp/"):]
    assert f"baton's sandbox kept {scratch} at {kept}" in told and kept.read_text() == "kept\n", told[-800:]

    assert baton(plugin_copy, project, claude.home, "record", "build", "done", "x").returncode == 0
    fake_api.script = Turns([text("looking"), bash("look", f"echo more >> {scratch} && cat {scratch}")],
                            [text("done")])

    run = claude.run("do step look", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    assert outputs(fake_api)["look"].split() == ["kept", "more"]  # the job's /tmp, in a step that writes nothing
    assert host_files(host) == before and not Path(scratch).exists()


def test_a_chained_baton_record_reaches_the_job_while_the_work_writes_to_the_jobs_tmp(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    host = tmp_path / "hostdata.txt"  # under the host's /tmp
    host.write_text("host data\n")
    scratch = f"/tmp/baton-e2e-{uuid.uuid4().hex}.txt"
    write_plan(project, {"job": "e2e-chained-tmp", "steps": ["a", "b"]})
    fake_api.script = Turns(
        [text("writing"), bash("a", f'cat {host} && echo x > {scratch} && baton record a done "wrote it" && '
                                    f"cat {scratch}")],
        [bash("b", f'cat {scratch} && baton record b done "read it back"')],
        [text("done")])

    run = claude.run("do the job", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    seen = outputs(fake_api)
    assert seen["a"].split()[:2] == ["host", "data"], seen["a"]  # the host's file, read with the broker's call
    assert "recorded a done" in seen["a"] and seen["a"].split()[-1] == "x", seen["a"]
    assert seen["b"].split()[0] == "x" and "recorded b done" in seen["b"], seen["b"]  # the job's next call
    records = [(r["step"], r["status"], r["note"]) for r in ledger(project) if r["status"] != "stop"]
    assert records[:2] == [("a", "done", "wrote it"), ("b", "done", "read it back")], records
    assert not Path(scratch).exists() and host.read_text() == "host data\n"  # the host's /tmp is as it was
    kept = next(Path(claude.home, ".cache/baton/jobs").glob("*/tmp")) / scratch[len("/tmp/"):]
    assert kept.read_text() == "x\n"  # the file is the job's


def repository(project: Path) -> None:
    (project / "src").mkdir()
    (project / "README.md").write_text("readme\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")


def test_a_step_with_writes_commits_its_own_files_and_nothing_else_of_git(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    repository(project)
    config = (project / ".git" / "config").read_bytes()
    write_plan(project, PLAN)
    commit = "git add src/a.py && git -c user.name=t -c user.email=t@t commit -qm 'add a' && git log --oneline -1"
    fake_api.script = Turns(
        [text("writing"), tool_use("Write", {"file_path": "src/a.py", "content": "a = 1\n"}, id="write")],
        [bash("commit", commit)],
        [bash("config", "git config user.name pwn; git config core.hooksPath src; echo x > .git/hooks/post-commit")],
        [text("done")])

    run = claude.run("do step build", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    seen = outputs(fake_api)
    assert seen["commit"].strip().endswith("add a"), seen["commit"]
    assert git(project, "log", "--format=%s", "-1").strip() == "add a"
    assert git(project, "status", "--porcelain", "--", "src") == ""
    assert (project / ".git" / "config").read_bytes() == config and not (project / ".git/hooks/post-commit").exists()


def test_sandboxed_calls_leave_no_empty_folders_in_the_project(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    repository(project)
    write_plan(project, {"steps": ["open", {"id": "build", "writes": ["src/**"]}]})  # the whole project, then src
    fake_api.script = Turns([text("looking"), bash("ls", "ls")], [bash("status", "git status --short")],
                            [text("done")])

    run = claude.run("do step open", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    assert "README.md" in outputs(fake_api)["ls"]
    for litter in (".claude", ".git/modules", ".git/worktrees"):
        assert not (project / litter).exists(), f"{litter} was left in the project"


def test_a_big_project_runs_sandboxed_and_its_protected_files_stay(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    for i in range(6000):  # more entries at the top than a walk used to sort, before the protected file
        (project / f"data{i:04}.txt").write_text("")
    (project / "keys").mkdir()
    (project / "keys" / "site.pem").write_text("secret\n")
    write_plan(project, {"protect": ["**/*.pem"], "steps": ["open", {"id": "texts", "writes": ["*.txt"]}]})
    fake_api.script = Turns([text("working"), bash("open", "echo new > new.txt && ls | wc -l")],
                            [bash("pem", "echo pwn | tee -a keys/site.p?m; python3 -c 'open(\"keys/o\" + "
                                         "\"ther.pem\", \"w\")'; cat keys/site.pem")],  # names the gate cannot read
                            [text("done")])

    run = claude.run("do step open", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    seen = outputs(fake_api)
    assert seen["open"].split()[-1] == "6002", seen["open"]  # 6000 files, keys/ and new.txt
    assert "Read-only file system" in seen["pem"] and (project / "keys" / "site.pem").read_text() == "secret\n"
    assert not (project / "keys" / "other.pem").exists()  # a new protected file is removed after the command

    assert baton(plugin_copy, project, claude.home, "record", "open", "done", "x").returncode == 0
    fake_api.script = Turns([text("texts"), bash("texts", "echo edited > data0001.txt && echo made > more.txt; "
                                                         "python3 -c 'open(\"keys/x.md\", \"w\")'; "
                                                         "cat data0001.txt more.txt")],
                            [text("done")])

    run = claude.run("do step texts", cwd=project, plugin_dir=plugin_copy, timeout=240)

    assert run.returncode == 0, run.stderr
    assert outputs(fake_api)["texts"].split()[-2:] == ["edited", "made"]
    assert not (project / "keys" / "x.md").exists() and (project / "keys" / "site.pem").read_text() == "secret\n"
