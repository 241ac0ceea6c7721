"""baton's own commands chained with the work, in the real CLI with bubblewrap: the forms models write
(`work && baton record ...`, `X; baton record`, `baton brief && X`, `cd src && X && baton record`,
`test && record done || record failed`, a loop, a subshell) record as they would without the
sandbox, while a forged ledger line in the same command lands nowhere; `baton` in a script the gate
cannot read says it cannot reach the job and fails (and says to run it as a command of its own); a
call only a person may make is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import gatemodes

from .driver import Claude
from .fakeapi import FakeAPI, text, tool_use
from .jobstate import Turns, baton, ledger, results_by_id, write_plan

PLAN = {"steps": ["a", "b", "c", "d", "e", "f"]}
CHAINED = {  # the tool_use id, the model's command (run in this order, one per turn)
    "hidden": "sh tools/record.sh",
    "a": 'echo A > a.txt && baton record a done "wrote a.txt"',
    "b": 'echo B > b.txt; echo pwn | tee -a .bat?n/steps.jsonl; baton record b done "wrote b.txt"',
    "c": 'baton brief && mkdir -p src && cd src && echo C > c.txt && baton record c done "c in src"',
    "d": 'cd .. && test -f src/c.txt && baton record d done "c.txt is there" || baton record d failed "no c.txt"',
    "e": 'for s in e; do (echo E > e.txt; baton record $s done "in a loop and a subshell"); done',
    "f": "true; baton record f done early",
}


def test_chained_baton_commands_record_as_without_the_sandbox(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)  # bubblewrap runs here: these commands run in baton's sandbox
    write_plan(project, PLAN)
    (project / "tools").mkdir()
    (project / "tools/record.sh").write_text("baton record a done from-a-script\n")
    fake_api.script = Turns(*[[tool_use("Bash", {"command": command, "description": key}, id=key)]
                              for key, command in CHAINED.items()], [text("all recorded")])
    run = claude.run("do the job", cwd=project, plugin_dir=plugin_copy)
    assert run.returncode == 0, run.stderr

    results = results_by_id(fake_api.requests_main()[-1])
    hidden = results["hidden"]
    assert hidden.is_error and "cannot reach the job" in hidden.text
    assert "run `baton record a done from-a-script` as a command of its own" in hidden.text
    assert "recorded a done" in results["a"].text and "recorded b done" in results["b"].text
    assert "Read-only file system" in results["b"].text  # the forged line went nowhere
    assert "NEXT: c" in results["c"].text and "recorded c done" in results["c"].text
    assert "recorded d done" in results["d"].text and "recorded e done" in results["e"].text
    assert "recorded f done" in results["f"].text

    records = [(r["step"], r["status"], r["note"]) for r in ledger(project) if r["status"] != "stop"]
    assert records[:6] == [("a", "done", "wrote a.txt"), ("b", "done", "wrote b.txt"), ("c", "done", "c in src"),
                           ("d", "done", "c.txt is there"), ("e", "done", "in a loop and a subshell"),
                           ("f", "done", "early")], records
    assert "pwn" not in (project / ".baton/steps.jsonl").read_text()
    assert {r["session"] for r in ledger(project)} == {run.session_id}
    for name in ("a.txt", "b.txt", "src/c.txt", "e.txt"):  # `cd ..` in d persisted too
        assert (project / name).exists(), name
    checked = baton(plugin_copy, project, claude.home, "verify")
    assert checked.returncode == 0 and checked.stdout.startswith("ok:"), checked.stdout + checked.stderr


def test_a_call_only_a_person_may_make_is_refused_in_one_line(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    gatemodes.sandboxed_here(claude.home)
    write_plan(project, {"steps": ["a", {"id": "b", "approval": True}, "c"]})
    (project / "tools").mkdir()
    (project / "tools/ahead.sh").write_text("baton approve b\n")  # hidden from the gate's reading
    command = "echo A > a.txt && baton record a done ok && sh tools/ahead.sh"
    fake_api.script = Turns([tool_use("Bash", {"command": command, "description": "x"}, id="x")], [text("stop")])
    run = claude.run("do the job", cwd=project, plugin_dir=plugin_copy)
    assert run.returncode == 0, run.stderr

    result = results_by_id(fake_api.requests_main()[-1])["x"]
    refusals = [line for line in result.text.splitlines() if line.startswith("baton denied")]
    assert result.is_error and len(refusals) == 1, result.text
    assert "only a person approves a step" in refusals[0]
    assert [(r["step"], r["status"]) for r in ledger(project) if r["status"] != "stop"] == [("a", "done")]
