"""Write gates: while a step with `writes` is NEXT, the model writes only inside it, through any tool.

Never into `.baton/` or the plan's `protect` globs either, and the job's `rules` hold for Bash.
Each test drives the real CLI with the plugin copy: the scripted model makes its calls, and the
test checks what the model was told (the tool_result texts of the next request), what is on disk,
and that baton's own files are untouched.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .driver import Claude
from .fakeapi import FakeAPI, text, tool_use
from .jobstate import baton, gate_denied, ledger, results_by_id, write_plan

PLAN = {
    "job": "e2e-gates",
    "protect": ["src/generated/**"],
    "rules": [{"id": "no-push", "deny_bash": "git push*", "reason": "pushing is the person's call"}],
    "limits": {"tool_calls": 200, "stop_blocks": 3},
    "steps": [
        {"id": "a", "title": "write the sources", "phase": "implemented",
         "tools": ["Read", "Write", "Edit", "Bash"], "writes": ["src/**"]},
        {"id": "b", "title": "test them", "phase": "validated"},
    ],
}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def job_with_a_symlink(project: Path) -> Path:
    """The plan above, src/, and src/link pointing at ../outside (a folder the step may not write)."""
    plan = write_plan(project, PLAN)
    (project / "src").mkdir()
    (project / "outside").mkdir()
    (project / "src" / "link").symlink_to("../outside")
    return plan


def write(call_id: str, path: str) -> dict[str, object]:
    return tool_use("Write", {"file_path": path, "content": f"written by {call_id}\n"}, id=call_id)


def bash(call_id: str, command: str) -> dict[str, object]:
    return tool_use("Bash", {"command": command, "description": call_id}, id=call_id)


def test_write_tool_lands_only_inside_the_steps_writes(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    plan = job_with_a_symlink(project)
    plan_before = digest(plan)
    fake_api.script = [
        [
            text("writing"),
            write("w_ok", "src/ok.txt"),
            write("w_notes", "notes.txt"),
            write("w_dotdot", "src/../escape.txt"),
            write("w_link", "src/link/x.txt"),
            write("w_plan", ".baton/plan.json"),
            write("w_protected", "src/generated/x.txt"),
        ],
        [text("wrote what I could")],
    ]

    run = claude.run("do step a", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[1])
    assert not seen["w_ok"].is_error, seen["w_ok"].text
    assert "File created successfully" in seen["w_ok"].text
    denied = {cid: seen[cid] for cid in ("w_notes", "w_dotdot", "w_link", "w_plan", "w_protected")}
    for cid, result in denied.items():
        assert gate_denied(result), (cid, result.text)
        assert result.text.startswith("baton denied writing "), (cid, result.text)  # no prefix for Write
    assert "notes.txt (resolved): step a may write only src/**" in denied["w_notes"].text
    assert "escape.txt (resolved): step a may write only src/**" in denied["w_dotdot"].text
    assert "outside/x.txt (resolved): step a may write only src/**" in denied["w_link"].text
    assert "inside .baton/, baton's own state" in denied["w_plan"].text
    assert "src/generated/x.txt: the plan's `protect` list covers it" in denied["w_protected"].text
    assert run.output is not None
    refused = {d["tool_use_id"] for d in run.output["permission_denials"]}
    assert refused == set(denied)

    assert (project / "src/ok.txt").read_text() == "written by w_ok\n"
    for stray in ("notes.txt", "escape.txt", "outside/x.txt", "src/generated/x.txt"):
        assert not (project / stray).exists(), stray
    assert digest(plan) == plan_before


BASH_DENIED = {
    "b_notes": "echo x > notes.txt",
    "b_dotdot": "echo x > src/../escape.txt",
    "b_link": "echo x > src/link/x.txt",
    "b_heredoc": "cat > .baton/steps.jsonl <<EOF\n{\"seq\": 1, \"step\": \"a\", \"status\": \"done\"}\nEOF",
    "b_sed": "sed -i 's/write/WRITE/' .baton/plan.json",
    "b_python": "python3 -c \"open('.baton/steps.jsonl','a').write('x')\"",
    "b_push": "git push origin main",
}
BASH_ALLOWED = {
    "b_stderr": "echo hi >&2",
    "b_ls": "ls 2>/dev/null",
    "b_brief": "baton brief",
    "b_inside": "echo y > src/from_bash.txt",
}


def test_bash_is_gated_like_write_and_harmless_commands_still_run(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    plan = job_with_a_symlink(project)
    plan_before = digest(plan)
    calls = [bash(cid, cmd) for cid, cmd in {**BASH_DENIED, **BASH_ALLOWED}.items()]
    fake_api.script = [[text("shell work"), *calls], [text("shell work done")]]

    run = claude.run("do step a", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[1])
    for cid in BASH_DENIED:
        assert gate_denied(seen[cid]), (cid, seen[cid].text)
        assert seen[cid].text.startswith("PreToolUse:Bash hook error: baton denied "), (cid, seen[cid].text)
    assert "notes.txt" in seen["b_notes"].text and "may write only src/**" in seen["b_notes"].text
    assert "escape.txt" in seen["b_dotdot"].text and "may write only src/**" in seen["b_dotdot"].text
    assert "may write only src/**" in seen["b_link"].text and "x.txt outside them" in seen["b_link"].text
    assert ".baton/steps.jsonl, and it is inside .baton/, baton's own state" in seen["b_heredoc"].text
    assert ".baton/plan.json, and it is inside .baton/, baton's own state" in seen["b_sed"].text
    assert "names baton's own files" in seen["b_python"].text
    assert "the job's rule `git push*` forbids it: pushing is the person's call" in seen["b_push"].text
    for cid in BASH_ALLOWED:
        assert not seen[cid].is_error, (cid, seen[cid].text)
    assert seen["b_stderr"].text.strip() == "hi"
    assert "src" in seen["b_ls"].text.split() and "outside" in seen["b_ls"].text.split()
    assert "NEXT: a - write the sources" in seen["b_brief"].text
    assert "DONE: (nothing yet)" in seen["b_brief"].text

    assert (project / "src/from_bash.txt").read_text() == "y\n"
    assert not (project / "notes.txt").exists()
    assert not (project / "escape.txt").exists()
    assert not (project / "outside/x.txt").exists()
    assert digest(plan) == plan_before
    # The ledger holds only what baton wrote itself (the Stop hook's record), and its chain holds.
    assert {r["status"] for r in ledger(project)} <= {"stop"}
    verified = baton(plugin_copy, project, claude.home, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
