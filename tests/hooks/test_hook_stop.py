"""Stop: send the agent back with the NEXT line while work is left, within baton's own budget per
session; let it stop when done, waiting, over a limit, stuck, or out of budget (one stop record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

from store.state.protocol import stop_reason

OTHER = "b7c1e2d3-0000-4000-8000-00000000beef"


def stop(payload: Payloads, session: str = hookkit.SESSION, active: bool = False, **changes: Any) -> Dict[str, Any]:
    return payload("stop_active" if active else "stop", session_id=session, **changes)


def stop_records(job: JobDir) -> List[Dict[str, Any]]:
    return [r for r in job.ledger() if r["status"] == "stop"]


def test_blocks_with_the_next_line_while_work_is_left(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "build", "title": "Build it"}, "ship"]})
    result = hook("Stop", stop(payload))
    assert result.answer == {"hookSpecificOutput": {
        "hookEventName": "Stop", "additionalContext": stop_reason("NEXT: build - Build it", "build", 1, 12)}}
    assert "NEXT: build - Build it" in result.reason
    assert 'baton record build done "<note>", run baton brief' in result.reason
    assert "(baton has sent this session back 1 of at most 12 times.)" in result.reason
    assert stop_records(job) == []


def test_stop_hook_active_alone_is_not_trusted(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    assert hook("Stop", stop(payload, active=True)).answer is not None


def test_allows_when_every_step_is_complete(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    job.record("a", "done")
    job.record("b", "skipped", "not needed")
    assert hook("Stop", stop(payload)).out == ""
    assert stop_records(job) == []


def test_no_plan_no_output(hook: Hook, job: JobDir, payload: Payloads) -> None:
    assert hook("Stop", stop(payload)).out == ""
    assert not job.state.exists()


def test_allows_when_next_waits_for_a_person(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a", {"id": "design", "approval": True}]})
    job.record("a", "done")
    assert hook("Stop", stop(payload)).out == ""
    (record,) = stop_records(job)
    assert record["step"] == "design"
    assert record["note"] == "session ended with design still NEXT: waiting for a person's approval of design"
    assert record["session"] == hookkit.SESSION


def test_allows_when_a_limit_is_reached(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"tool_calls": 1}, "steps": ["a", "b"]})
    hook("PostToolUse", payload("post_tool_use_bash"))
    assert hook("Stop", stop(payload)).out == ""
    assert stop_records(job)[0]["note"] == "session ended with a still NEXT: limit reached: tool_calls 1 of 1"


def test_turns_limit_counts_stop_events(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"turns": 2}, "steps": ["a", "b", "c"]})
    assert hook("Stop", stop(payload)).answer is not None
    job.record("a", "done")
    let_go = hook("Stop", stop(payload))
    assert let_go.answer == {"systemMessage": "baton alert: job limit reached: turns 2 of 2; baton now allows only "
                                              "reading"}, "the person is told, once; the session may stop"
    assert "limit reached: turns 2 of 2" in stop_records(job)[0]["note"]
    assert job.counters()["turns"] == 2
    job.record("b", "done")
    assert hook("Stop", stop(payload)).out == "", "the same limit is not raised again"


def test_tokens_are_summed_from_the_transcript(inproc: Hook, job: JobDir, payload: Payloads, tmp_path: Path) -> None:
    job.plan({"limits": {"tokens": 1000}, "steps": ["a", "b"]})
    transcript = tmp_path / "session.jsonl"
    usage = {"input_tokens": 300, "output_tokens": 200, "cache_read_input_tokens": 100}
    transcript.write_text(json.dumps({"type": "assistant", "message": {"usage": usage}}) + "\n" + "{torn")
    assert inproc("Stop", stop(payload, transcript_path=str(transcript))).answer is not None
    assert job.counters()["tokens"] == 600
    job.record("a", "running")
    with transcript.open("a") as handle:  # the torn line completes, and one more turn arrives
        handle.write(' "x": 1}\n' + json.dumps({"message": {"usage": usage}}) + "\n")
    let_go = inproc("Stop", stop(payload, transcript_path=str(transcript)))
    assert let_go.answer == {"systemMessage": "baton alert: job limit reached: tokens 1200 of 1000; baton now "
                                              "allows only reading"}
    assert job.counters()["tokens"] == 1200
    assert "limit reached: tokens 1200 of 1000" in stop_records(job)[0]["note"]


def test_lets_go_when_nothing_was_recorded_since_the_last_block(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    assert hook("Stop", stop(payload)).answer is not None
    assert hook("Stop", stop(payload, active=True)).out == ""
    (record,) = stop_records(job)
    assert record["note"] == ("session ended with a still NEXT: nothing recorded since baton last sent the "
                              "session back")
    assert hook("Stop", stop(payload, active=True)).out == ""
    assert hook("Stop", stop(payload)).out == ""
    assert len(stop_records(job)) == 1, "one stop record per session and state of progress"


def test_progress_earns_another_block(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b", "c"])
    assert "NEXT: a." in hook("Stop", stop(payload)).reason
    job.record("a", "done", "first")
    second = hook("Stop", stop(payload, active=True))
    assert "NEXT: b." in second.reason and "sent this session back 2 of at most 12 times" in second.reason
    job.record("b", "running", "started")  # a running record is progress too
    assert "NEXT: b." in hook("Stop", stop(payload, active=True)).reason
    assert stop_records(job) == []


def test_the_session_budget_is_spent_even_with_progress(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"stop_blocks": 2}, "steps": ["a", "b", "c", "d"]})
    assert "1 of at most 2" in hook("Stop", stop(payload)).reason
    job.record("a", "done")
    assert "2 of at most 2" in hook("Stop", stop(payload, active=True)).reason
    job.record("b", "done")
    assert hook("Stop", stop(payload, active=True)).out == ""
    (record,) = stop_records(job)
    assert record["step"] == "c"
    assert record["note"] == "session ended with c still NEXT: this session's budget of 2 continuations is spent"
    job.record("c", "done")
    assert hook("Stop", stop(payload, active=True)).out == "", "the budget stays spent"


def test_each_session_has_its_own_budget(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"stop_blocks": 1}, "steps": ["a", "b", "c"]})
    assert "1 of at most 1" in hook("Stop", stop(payload)).reason
    job.record("a", "done")
    assert hook("Stop", stop(payload, active=True)).out == ""
    other = hook("Stop", stop(payload, session=OTHER))
    assert "NEXT: b." in other.reason and "1 of at most 1" in other.reason
    stops = job.counters()["stops"]
    assert stops[hookkit.SESSION]["blocks"] == 1 and stops[OTHER]["blocks"] == 1
    assert [r["session"] for r in stop_records(job)] == [hookkit.SESSION]


BACKGROUND = [{"id": "ab93c1d7e5f24a60", "type": "subagent", "status": "running", "description": "sub job",
               "agent_type": "general-purpose"}]


def test_a_stop_while_a_subagent_runs_passes_quietly(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"stop_blocks": 1}, "steps": ["a", "b"]})
    for _ in range(3):
        assert hook("Stop", payload("stop_background")).out == ""
    assert stop_records(job) == [], "the session goes on when the subagent finishes"
    counters = job.counters()
    assert counters["turns"] == 3 and counters.get("stops", {}).get(hookkit.SESSION, {}).get("blocks", 0) == 0
    assert "1 of at most 1" in hook("Stop", stop(payload)).reason, "the budget was not spent meanwhile"


@pytest.mark.parametrize("tasks", [
    [{**BACKGROUND[0], "status": "completed"}],
    [{**BACKGROUND[0], "type": "bash"}],
    "not a list",
    [None, 3],
])
def test_only_a_running_subagent_counts_as_background_work(tasks: Any, inproc: Hook, job: JobDir,
                                                           payload: Payloads) -> None:
    job.plan(["a"])
    assert "NEXT: a." in inproc("Stop", stop(payload, background_tasks=tasks)).reason


def test_a_system_record_is_not_progress(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    assert inproc("Stop", stop(payload)).answer is not None
    job.record("a", "alert", "written by baton itself")
    assert inproc("Stop", stop(payload, active=True)).out == ""


@pytest.mark.parametrize("transcript", [None, 7, "", "/nonexistent/t.jsonl", "relative.jsonl"])
def test_a_bad_transcript_path_does_not_keep_a_session_alive_or_crash(transcript: Any, inproc: Hook, job: JobDir,
                                                                      payload: Payloads) -> None:
    job.plan(["a"])
    result = inproc("Stop", stop(payload, transcript_path=transcript))
    assert "NEXT: a." in result.reason
