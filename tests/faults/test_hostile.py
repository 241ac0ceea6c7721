"""Issue 25 item 11: hostile input, each case made for real (a plan that is a link to /dev/zero, a
FIFO, a link loop; a step id with a lone surrogate; hook input of 5, 9 and 70 MB, piped to the hook as
hooks.json starts it). What is refused is named, nothing is read without a bound, nothing waits, and
nothing is appended before it is validated."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any, Dict

import faultkit
import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

WRITE_STEP = {"id": "write", "writes": ["out/**"]}


def _job(sandbox: Sandbox, baton: Baton) -> None:
    assert baton("init", "a", "b").code == 0
    (sandbox.state / "plan.json").write_text(json.dumps({"steps": [WRITE_STEP, "b"]}))


def _write(sandbox: Sandbox, path: str, content: str) -> Dict[str, Any]:
    return {"tool_name": "Write", "tool_input": {"file_path": str(sandbox.project / path), "content": content}}


def _decision(answer: Any) -> str:
    return str(((answer or {}).get("hookSpecificOutput") or {}).get("permissionDecision", "allow"))


def _reason(answer: Any) -> str:
    return str(((answer or {}).get("hookSpecificOutput") or {}).get("permissionDecisionReason", ""))


@pytest.mark.parametrize("kind, words", [("zero", "a character device"), ("fifo", "a FIFO"),
                                         ("loop", "too many levels of symbolic links"),
                                         ("dangling", "which does not exist")])
def test_a_plan_that_is_not_a_file_is_named_at_once_and_the_gate_refuses(
        sandbox: Sandbox, baton: Baton, kind: str, words: str) -> None:
    _job(sandbox, baton)
    plan = sandbox.state / "plan.json"
    plan.unlink()
    if kind == "zero":
        plan.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(plan)
    elif kind == "loop":
        plan.symlink_to(plan)
    else:
        plan.symlink_to(sandbox.project / "gone.json")
    started = time.monotonic()
    for command in ("brief", "status"):
        run = baton(command, timeout=20)
        assert run.code == 2 and words in run.err and "internal error" not in run.err, run.err
    answer = faultkit.hook("PreToolUse", _write(sandbox, "out/x.txt", "x"), sandbox.project, matcher_tool="Write")
    assert _decision(answer) == "deny" and words in _reason(answer), answer
    start = faultkit.context(faultkit.hook("SessionStart", {"source": "startup"}, sandbox.project))
    assert words in start
    assert time.monotonic() - started < 20  # nothing read without end, nothing waited on
    assert not (sandbox.project / "out").exists()


def test_a_step_id_with_a_lone_surrogate_is_refused_before_anything_is_appended(
        sandbox: Sandbox, baton: Baton) -> None:
    _job(sandbox, baton)
    (sandbox.state / "plan.json").write_text('{"steps": ["a\\ud800", "b"]}')  # valid JSON, not valid text
    for args in (("brief",), ("record", "a\udcff", "done"), ("status",)):
        run = baton(*args)
        assert run.code == 2 and "internal error" not in run.err, run.err
        assert "lone surrogate" in run.err or "not a step" in run.err or "unknown step" in run.err, run.err
    assert "lone surrogate" in baton("brief").err
    assert not (sandbox.state / "steps.jsonl").exists() or (sandbox.state / "steps.jsonl").read_bytes() == b""


def test_a_note_that_is_not_text_is_refused_before_anything_is_appended(sandbox: Sandbox, baton: Baton) -> None:
    assert baton("init", "a", "b").code == 0
    # a note with bytes that are not UTF-8 reaches Python's argv as lone surrogates
    run = baton("record", "a", "done", "bad \udcff byte")
    assert run.code in (0, 2) and "internal error" not in run.err, run.err
    if run.code == 0:  # kept, as text the ledger can hold
        assert baton("verify").code == 0 and baton("brief").code == 0
    else:
        assert not (sandbox.state / "steps.jsonl").exists()
    assert baton("brief").code == 0


def test_a_large_write_is_gated_and_recorded_and_one_past_the_bound_is_refused_by_name(
        sandbox: Sandbox, baton: Baton) -> None:
    _job(sandbox, baton)
    for size in (5_000_000, 9_000_000):
        payload = _write(sandbox, "out/big.txt", "x" * size)
        assert _decision(faultkit.hook("PreToolUse", payload, sandbox.project, matcher_tool="Write")) == "allow"
        denied = faultkit.hook("PreToolUse", _write(sandbox, "src/big.txt", "x" * size), sandbox.project,
                               matcher_tool="Write")
        assert _decision(denied) == "deny" and "[baton:input-too-large]" not in _reason(denied)  # read, then judged
        before = (sandbox.state / "counters.json").read_text() if (sandbox.state / "counters.json").exists() else ""
        done = {**payload, "tool_response": {"type": "create", "filePath": payload["tool_input"]["file_path"],
                                             "content": payload["tool_input"]["content"]}}
        answer = faultkit.hook("PostToolUse", done, sandbox.project, matcher_tool="Write")
        assert "not recorded" not in json.dumps(answer or {})
        assert (sandbox.state / "counters.json").read_text() != before  # the outcome was counted
    huge = _write(sandbox, "out/huge.txt", "x" * (70 * 1024 * 1024))
    refused = faultkit.hook("PreToolUse", huge, sandbox.project, matcher_tool="Write")
    assert _decision(refused) == "deny" and "[baton:input-too-large]" in _reason(refused)
    assert "more than the 64.0 MiB baton reads" in _reason(refused)
    lost = faultkit.hook("PostToolUse", {**huge, "tool_response": {}}, sandbox.project, matcher_tool="Write")
    assert "outcome was not recorded" in str((lost or {}).get("systemMessage"))
    prompt = faultkit.hook("UserPromptSubmit", {"prompt": "/baton:record a done " + "n" * (70 * 1024 * 1024)},
                           sandbox.project)
    assert prompt is not None and prompt["continue"] is False and "was not sent" in prompt["stopReason"]
    assert "DEGRADED" in baton("brief").out


def test_a_long_prompt_note_is_recorded_whole_or_refused_by_name(sandbox: Sandbox, baton: Baton) -> None:
    assert baton("init", "a", "b").code == 0
    note = "n" * (9 * 1024 * 1024)
    answer = faultkit.hook("UserPromptSubmit", {"prompt": f"/baton:record a done {note}"}, sandbox.project)
    assert answer is not None and answer["continue"] is False
    ledger = (sandbox.state / "steps.jsonl").read_bytes() if (sandbox.state / "steps.jsonl").exists() else b""
    if ledger:
        assert "recorded a done" in answer["stopReason"]
    else:  # refused: and the person is told why, never silently
        reason = answer["stopReason"]
        assert "note" in reason and ("nothing was recorded" in reason or "not recorded" in reason), reason


