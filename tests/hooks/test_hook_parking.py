"""The gate parks (``defer``) a call that waits for a person's approval only where Claude Code
honours it: a `baton run` session (``BATON_PARK_APPROVALS=1``) whose Claude Code process was started
with ``-p``, the call alone in a message the transcript shows complete, in the main conversation of
a plan that is not parallel. Anywhere else the call is refused as before (``[baton:waiting]``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from conftest import Hook, JobDir, Payloads

from store.gate import parking
from store.state import job as state_job

PLAN = {"steps": ["a", {"id": "ship", "approval": True}]}
CALL = "toolu_2"  # the fixtures' tool_use_id


def process(*args: str) -> Iterator[int]:
    """A running process with ``args`` on its command line (as Claude Code is when its hooks run)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *args])
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    deadline = time.monotonic() + 10
    while args[0].encode() not in cmdline.read_bytes().split(b"\0"):  # empty until its exec is done
        assert time.monotonic() < deadline, "the process never showed its command line"
        time.sleep(0.01)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def headless() -> Iterator[int]:
    """A process whose command line holds -p, as `claude -p PROMPT ...` does."""
    yield from process("-p", "go on")


@pytest.fixture
def interactive() -> Iterator[int]:
    yield from process("--plugin-dir", "/opt/baton")


def transcript(payload: Dict[str, Any], *messages: List[Dict[str, Any]], complete: bool = True) -> None:
    """Write the session's transcript: each message's blocks one entry each, as Claude Code does."""
    path = Path(payload["transcript_path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": "go"}})]
    for n, blocks in enumerate(messages):
        for block in blocks:
            message = {"id": f"msg_{n}", "role": "assistant", "content": [block],
                       "stop_reason": "tool_use" if complete else None}
            lines.append(json.dumps({"type": "assistant", "message": message}))
    path.write_text("\n".join(lines) + "\n")


def use(call_id: str, command: str = "echo x > ship.txt") -> Dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}


def waiting(job: JobDir) -> None:
    job.plan(PLAN)
    job.record("a", "done", "built")


def parked(result: Any) -> bool:
    specific = (result.answer or {}).get("hookSpecificOutput") or {}
    return specific.get("permissionDecision") == "defer"


def bash(payload: Payloads, command: str) -> Dict[str, Any]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "x"}, tool_use_id=CALL)


def test_the_variable_the_state_and_the_gate_read_is_one() -> None:
    assert state_job.PARK_APPROVALS == parking.ENV


def test_a_baton_run_session_parks_the_change_and_lets_reading_run(
        hook: Hook, job: JobDir, payload: Payloads, headless: int, monkeypatch: pytest.MonkeyPatch) -> None:
    waiting(job)
    monkeypatch.setenv(parking.ENV, "1")
    monkeypatch.setenv("CLAUDE_PID", str(headless))
    write = payload("pre_tool_use_write", tool_input={"file_path": job.path("ship.txt"), "content": "x\n"})
    transcript(write, [{"type": "tool_use", "id": CALL, "name": "Write", "input": write["tool_input"]}])

    result = hook("PreToolUse", write)

    assert parked(result), result
    assert result.reason.startswith("baton parks this call until a person approves ship")
    transcript(write, [use(CALL)])
    assert parked(hook("PreToolUse", bash(payload, "echo x > ship.txt")))
    assert parked(hook("PreToolUse", bash(payload, "python3 make_ship.py")))  # not known to only read
    transcript(write, [use(CALL, "cat README.md")])
    assert not parked(hook("PreToolUse", bash(payload, "cat README.md")))  # reading runs
    assert not (job.project / "ship.txt").exists()


@pytest.mark.parametrize("case", ["no variable", "interactive", "two calls", "incomplete message",
                                  "not in the transcript", "subagent", "parallel plan"])
def test_anywhere_else_the_call_is_refused_as_before(case: str, hook: Hook, job: JobDir, payload: Payloads,
                                                    headless: int, interactive: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    waiting(job)
    if case == "parallel plan":  # a step that says what it needs makes the plan parallel
        job.plan({"steps": [{"id": "a", "needs": []}, {"id": "ship", "approval": True, "needs": ["a"]}]})
    monkeypatch.setenv(parking.ENV, "0" if case == "no variable" else "1")
    monkeypatch.setenv("CLAUDE_PID", str(interactive if case == "interactive" else headless))
    call = bash(payload, "echo x > ship.txt")
    if case == "subagent":
        call = payload("pre_tool_use_bash_subagent", tool_input={"command": "echo x > ship.txt"}, tool_use_id=CALL)
    messages = {"two calls": [[use(CALL), use("toolu_3")]], "not in the transcript": [[use("toolu_9")]]}
    transcript(call, *messages.get(case, [[use(CALL)]]), complete=case != "incomplete message")

    result = hook("PreToolUse", call)

    assert not parked(result) and result.denied, result
    assert "[baton:waiting]" in result.reason or "[baton:no-claim]" in result.reason


def test_once_approved_the_parked_call_is_judged_as_any_other(
        hook: Hook, job: JobDir, payload: Payloads, headless: int, monkeypatch: pytest.MonkeyPatch) -> None:
    waiting(job)
    monkeypatch.setenv(parking.ENV, "1")
    monkeypatch.setenv("CLAUDE_PID", str(headless))
    write = payload("pre_tool_use_write", tool_input={"file_path": job.path("ship.txt"), "content": "x\n"})
    transcript(write, [{"type": "tool_use", "id": CALL, "name": "Write", "input": write["tool_input"]}])
    assert parked(hook("PreToolUse", write))
    job.record("ship", "approved", "by a person", by="person")  # not signed: it does not count
    assert parked(hook("PreToolUse", write)), "an unsigned approval must not release the call"


def test_the_brief_of_a_baton_run_session_says_the_change_will_wait(job: JobDir) -> None:
    waiting(job)
    parks = state_job.Job(job.layout, {parking.ENV: "1"}).brief()
    assert ("WAITING: ship needs a person's approval; this unattended session can wait for it: prepare ship and "
            "make its first change, which baton holds (the session ends there) and runs once a person approves; "
            "do not record it before") in parks.splitlines()
    plain = state_job.Job(job.layout, {}).brief()
    assert ("WAITING: ship needs a person's approval (they type /baton:approve ship); until then only read, and do "
            "not record it") in plain.splitlines()
