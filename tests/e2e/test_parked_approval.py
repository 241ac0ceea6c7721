"""Parked approvals: in a `baton run` session, the first change made to a step that waits for a
person's approval is parked (PreToolUse `defer`) instead of refused; the run stops (exit 3), and once
a person approves, the next `baton run` resumes that same session at that call, which the gate then
judges again. Where Claude Code ignores `defer` (the interactive terminal) the call is refused as
before, and nothing it would have written is there.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import baton, ledger, results_by_id, write_plan
from .runs import BatonRun, run_to_end
from .test_interactive import Tmux, start_tui, submit
from .test_run import record

PLAN = {"steps": ["a", {"id": "ship", "title": "ship it", "approval": True}]}


def shell(command: str) -> list[dict[str, Any]]:
    return [tool_use("Bash", {"command": command, "description": "work"})]


def approve(run: BatonRun, project: Path, claude: Claude) -> None:
    """What a person does: the approve command the run printed, in a terminal."""
    [stop] = run.of("stop")
    line = next(ln.split("approve:", 1)[1].strip() for ln in stop["message"].splitlines() if "approve:" in ln)
    done = subprocess.run(shlex.split(line), cwd=project, env=claude.env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "approved ship" in done.stdout, done.stdout + done.stderr


def sessions(project: Path) -> list[dict[str, Any]]:
    return [r for r in ledger(project) if r["status"] == "session"]


def test_an_approval_resumes_the_session_at_the_call_it_parked(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, PLAN)
    fake_api.script = [record("a"), shell("echo shipped > shipped.txt"), record("ship"), [text("shipped")]]

    code, first = run_to_end(claude, plugin_copy, project)

    assert code == 3, first.stderr
    assert [e["ended"] for e in first.of("session_end")] == ["parked"]
    assert not (project / "shipped.txt").exists(), "a parked call ran before the approval"
    [parked] = sessions(project)
    assert parked["ended"] == "parked" and parked["step"] == "a"
    assert parked["parked"]["tool"] == "Bash" and "echo shipped > shipped.txt" in parked["parked"]["what"]
    [stop] = first.of("stop")
    assert stop["outcome"] == "approval" and f"resumes session {parked['session'][:8]}" in stop["message"]
    # after recording a, the model was told that this unattended session can wait for the approval
    told = all_text_of(fake_api.requests_main()[1])
    assert "WAITING: ship needs a person's approval; this unattended session can wait for it" in told

    code, again = run_to_end(claude, plugin_copy, project)
    assert code == 3 and again.of("session_start") == [], "nothing may start before the approval"

    approve(first, project, claude)
    code, second = run_to_end(claude, plugin_copy, project)

    assert code == 0, second.stderr
    [start] = second.of("session_start")
    assert start["resume"] == parked["session"] and "--resume" in start["argv"]
    assert (project / "shipped.txt").read_text() == "shipped\n"
    resumed = fake_api.requests_main()[2]
    assert "baton record a done" in all_text_of(resumed)  # the same conversation, kept
    [held] = [r for r in results_by_id(resumed).values() if r.tool_use_id == parked["parked"]["id"]]
    assert not held.is_error, held  # the model is told what the call it made did
    assert [r["ended"] for r in sessions(project)] == ["parked", "completed"]
    assert sessions(project)[1]["session"] == parked["session"]
    assert [r["step"] for r in ledger(project) if r["status"] == "done"] == ["a", "ship"]


def test_calls_made_together_are_refused_as_before_and_nothing_is_parked(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    """Claude Code 2.1.328 parks a call well only alone in its message: beside another one, a resumed
    session ran the parked call and told the model its result was missing."""
    write_plan(project, PLAN)
    both = [*shell("echo one > one.txt"), *shell("echo two > two.txt")]
    fake_api.script = [record("a"), both, [text("ship waits for a person")], shell("echo one > one.txt"),
                       record("ship"), [text("shipped")]]

    code, first = run_to_end(claude, plugin_copy, project)

    assert code == 3, first.stderr
    assert [e["ended"] for e in first.of("session_end")] == ["approval"]
    refused = [r for r in results_by_id(fake_api.requests_main()[2]).values() if r.is_error]
    assert len(refused) == 2 and all("[baton:waiting]" in r.text for r in refused), refused
    assert not (project / "one.txt").exists() and not (project / "two.txt").exists()
    approve(first, project, claude)
    code, second = run_to_end(claude, plugin_copy, project)

    assert code == 0, second.stderr
    [start] = second.of("session_start")
    assert start["resume"] is None  # a fresh session: nothing was parked
    assert (project / "one.txt").read_text() == "one\n"


def test_a_person_can_keep_todays_stop(claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path) -> None:
    write_plan(project, PLAN)
    fake_api.script = [record("a"), shell("echo shipped > shipped.txt"), [text("ship waits for a person")]]

    code, run = run_to_end(claude, plugin_copy, project, env={"BATON_PARK_APPROVALS": "0"})

    assert code == 3, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["approval"]
    refused = results_by_id(fake_api.requests_main()[2])
    assert [r.text for r in refused.values() if "[baton:waiting]" in r.text], refused
    assert not (project / "shipped.txt").exists()
    assert "resumes session" not in run.of("stop")[0]["message"]


def test_the_interactive_terminal_never_parks_a_call(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    """Claude Code ignores `defer` outside -p and would go on to run the call: baton refuses it there,
    even with BATON_PARK_APPROVALS=1 in the terminal's environment."""
    write_plan(project, PLAN)
    made = baton(plugin_copy, project, claude.home, "record", "a", "done", "by hand")
    assert made.returncode == 0, made.stderr
    fake_api.script = [shell("echo shipped > shipped.txt"), [text("Held until someone approves.")]]
    original = Claude.env
    claude.env = lambda extra=None: original(claude, {"BATON_PARK_APPROVALS": "1", **(extra or {})})  # type: ignore[method-assign]
    settings = claude.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"], "defaultMode": "acceptEdits"}}))
    tmux = Tmux(f"baton-e2e-{claude.tag}")
    try:
        start_tui(claude, project, plugin_copy, tmp_path, tmux)
        submit(tmux, "Ship it.")
        # The refusal itself says "ship waits for a person": wait for the model's own words after it.
        tmux.wait_for(lambda s: "Held until someone approves." in s, "the model's answer", timeout=60)
    finally:
        tmux.kill()

    requests = fake_api.requests_main()
    assert len(requests) == 2, [(e.kind, e.turn) for e in fake_api.log]
    refused = results_by_id(requests[1])
    assert [r.text for r in refused.values() if "[baton:waiting]" in r.text], refused
    assert not (project / "shipped.txt").exists()
