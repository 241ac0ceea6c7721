"""The hooks keep the job's figures: SessionStart and SessionEnd note each session's runs, SessionEnd
folds the cost Claude Code writes as a session ends, alerts reach the person (systemMessage) and the
model (now, or at its next hook) once per condition, and with ``BATON_TELEMETRY=1`` a Stop starts a
detached sender that reaches a real collector without the hook waiting for it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "monitor"))

from collector import Rotel, latest  # noqa: E402
from transcripts import assistant, cost_state, usage, write  # noqa: E402

from store.monitor import figures  # noqa: E402


def transcript_of(payload: Payloads, name: str = "stop") -> Path:
    return Path(payload(name)["transcript_path"])


def status(job: JobDir) -> Dict[str, Any]:
    from store.cli import views
    from store.state.job import Job

    return views.status_data(Job(job.layout, {}), [])


def test_a_session_start_and_end_are_noted_with_the_cost_written_at_the_end(hook: Hook, job: JobDir,
                                                                              payload: Payloads) -> None:
    job.plan(["a", "b"])
    path = transcript_of(payload)
    assert hook("SessionStart", payload("session_start_startup")).context
    write(path, assistant("m1", "r1", usage(100, 20, 1000, 50), "2026-11-30T10:00:01.000Z", ("text", "tool_use")))
    assert hook("Stop", payload("stop")).answer is not None
    assert status(job)["sessions"][0]["cost_usd"] is None, "no cost before the session ends"
    write(path, [cost_state(0.0123, {"input": 100, "output": 20, "read": 1000, "write": 50})], append=True)
    assert hook("SessionEnd", payload("session_end")).out == ""
    data = status(job)
    [session] = data["sessions"]
    assert (session["id"], session["ended"], session["cost_usd"], session["cost_complete"]) == (
        hookkit.SESSION, "other", 0.0123, True)
    assert data["tokens"]["total"] == 1170 and data["turns"] == 1
    assert data["steps"][0]["cost_usd"] == pytest.approx(0.0123)
    kinds = [(e.get("kind"), e.get("event")) for e in job.events()]
    assert kinds == [("session", "start"), ("session", "end")]


def test_a_broken_figures_file_never_changes_the_stop_decision(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    Path(figures.folder(job.layout)).mkdir(parents=True)
    Path(figures.path_of(job.layout)).mkdir()  # a folder where the file belongs: it can be neither read nor saved
    result = hook("Stop", payload("stop"), stderr_ok=True)
    assert "NEXT: a." in result.reason
    assert "figures" in job.layout.errors.read_text() and "Stop" in job.layout.errors.read_text()


def test_no_progress_in_time_is_raised_once_to_the_person_and_the_model(inproc: Hook, job: JobDir,
                                                                         payload: Payloads) -> None:
    job.plan({"limits": {"no_progress_minutes": 30}, "steps": ["a", "b"]})
    job.record("a", "running", "started", ts="2026-11-30T08:00:00Z")
    first = inproc("PostToolUse", payload("post_tool_use_bash"))
    assert first.answer is not None
    assert first.answer["systemMessage"].startswith("baton alert: no step recorded for ")
    assert "(no_progress_minutes 30); NEXT is a" in first.answer["systemMessage"]
    assert "If a is done, record it" in first.context
    again = inproc("PostToolUse", payload("post_tool_use_bash"))
    assert again.out == "", "raised once per condition, not on every call"
    job.record("a", "done", "ok", ts="2026-11-30T08:10:00Z")  # progress, but long ago: a new condition
    later = inproc("PostToolUse", payload("post_tool_use_bash"))
    assert "NEXT is b" in later.answer["systemMessage"]  # type: ignore[index]
    assert [e["alert"] for e in job.events() if e.get("kind") == "alert"] == ["no-progress", "no-progress"]


def test_repeated_failures_reach_the_person_once_per_run_of_failures(inproc: Hook, job: JobDir,
                                                                     payload: Payloads) -> None:
    job.plan(["a"])
    failing = payload("post_tool_use_failure_bash")
    answers = [inproc("PostToolUseFailure", failing).answer for _ in range(7)]
    people = [a["systemMessage"] for a in answers if a and "systemMessage" in a]
    assert len(people) == 1 and "the same Bash call failed 3 times in a row" in people[0]
    models = [a["hookSpecificOutput"]["additionalContext"] for a in answers if a and "hookSpecificOutput" in a]
    assert len(models) == 2, "the model is still reminded at 3 and 6"
    inproc("PostToolUse", payload("post_tool_use_bash"))
    for _ in range(3):
        answer = inproc("PostToolUseFailure", failing).answer
    assert answer is not None and "systemMessage" in answer, "a new run of failures is a new condition"


def _cost_job(job: JobDir, path: Path, limit: float) -> None:
    job.plan({"limits": {"cost_usd": limit}, "steps": ["a", "b", "c", "d"]})
    write(path, assistant("m1", "r1", usage(1000, 0), "2026-11-30T10:00:01Z")
          + [cost_state(1.0, {"input": 1000})])
    job.record("a", "done", "", ts="2026-11-30T10:00:02Z")


def test_a_cost_projection_over_the_limit_alerts_after_session_end_and_reaches_the_next_hook(
        hook: Hook, job: JobDir, payload: Payloads) -> None:
    path = transcript_of(payload)
    _cost_job(job, path, limit=2.0)  # $1 for the first of four steps: about $4 at completion
    started = time.monotonic()
    assert hook("SessionEnd", payload("session_end")).out == ""
    assert time.monotonic() - started < 5
    alert = wait_for_alert(job)  # raised by the detached process SessionEnd started
    assert alert["alert"] == "cost-projected"
    assert alert["message"] == "projected cost $4.00 exceeds limits.cost_usd $2.00 ($1.00 spent, $1.00 per done step)"
    shown = hook("PostToolUse", payload("post_tool_use_bash")).answer  # the person is told at the next hook
    assert shown is not None and shown["systemMessage"] == (
        "baton alert: projected cost $4.00 exceeds limits.cost_usd $2.00 ($1.00 spent, $1.00 per done step)")
    assert "at this rate" in shown["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in (hook("PostToolUse", payload("post_tool_use_bash")).answer or {}), "told once"
    context = hook("SessionStart", payload("session_start_resume")).context
    assert "NEXT: b" in context and "at this rate" not in context, "the model was told at its last hook"
    assert "projected cost $4.00" in "\n".join(hook_status(job))


def wait_for_alert(job: JobDir, timeout: float = 30.0) -> Dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in job.events() if e.get("kind") == "alert"]
        if found:
            assert len(found) == 1, found
            return found[0]
        time.sleep(0.05)
    raise AssertionError("no alert was raised")


def hook_status(job: JobDir) -> list[str]:
    from store.cli import views

    data = status(job)
    return views.status_text(data).splitlines()


def test_a_cost_projection_alert_at_a_stop_that_blocks_goes_into_the_reason(inproc: Hook, job: JobDir,
                                                                            payload: Payloads) -> None:
    path = transcript_of(payload)
    _cost_job(job, path, limit=2.0)
    result = inproc("Stop", payload("stop"))
    assert result.answer is not None
    assert "NEXT: b." in result.reason and "at this rate the job will cost about $4.00" in result.reason
    assert result.answer["systemMessage"].startswith("baton alert: projected cost $4.00 exceeds limits.cost_usd")
    assert "systemMessage" not in (inproc("Stop", payload("stop_active")).answer or {})


def test_under_the_limit_there_is_no_cost_alert(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    _cost_job(job, transcript_of(payload), limit=10.0)
    assert "systemMessage" not in (inproc("Stop", payload("stop")).answer or {})


def test_a_stop_with_telemetry_on_reaches_a_real_collector_without_waiting(subproc: Hook, job: JobDir,
                                                                           payload: Payloads) -> None:
    job.plan({"job": "hooked", "steps": [{"id": "a", "phase": "implemented"}, "b"]})
    path = transcript_of(payload)
    write(path, assistant("m1", "r1", usage(321, 12), "2026-11-30T10:00:01Z"))
    job.record("a", "running", "", ts="2026-11-30T10:00:00Z", session=hookkit.SESSION)
    collector = Rotel().start()
    try:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
               "BATON_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        started = time.monotonic()
        result = subproc("Stop", payload("stop"), env=env)
        assert "NEXT: a." in result.reason
        assert time.monotonic() - started < 10
        dump = collector.wait_for("Name: baton.job.tokens")
        assert latest(dump, "baton.job.tokens", type="input", **{"baton.step.id": "a",
                                                                 "session.id": hookkit.SESSION}) == 321
        assert latest(dump, "baton.job.tokens", type="input", **{"baton.step.phase": "implemented"}) == 321
        dump = collector.wait_for("baton.step.recorded")
        [running] = [r for r in dump["logs"] if r["EventName"] == "baton.step.recorded"]
        assert running["attributes"]["baton.step.status"] == "running"
        assert all(error == "" for _, _, _, error in collector.bodies)
    finally:
        collector.close()
    state = json.loads((job.state / "monitor" / "telemetry.json").read_text())
    assert state["ok"] and state["error"] is None


def test_an_alert_raised_as_a_session_stops_reaches_the_next_sessions_model(hook: Hook, job: JobDir,
                                                                            payload: Payloads) -> None:
    job.plan({"limits": {"turns": 1}, "steps": ["a", "b"]})
    let_go = hook("Stop", payload("stop"))
    assert let_go.answer == {"systemMessage": "baton alert: job limit reached: turns 1 of 1; baton now allows only "
                                              "reading"}
    context = hook("SessionStart", payload("session_start_startup")).context
    assert context.startswith("baton: the job reached its limit (turns 1 of 1); only reading is allowed now.")
    assert "NEXT: a" in context
    assert not hook("SessionStart", payload("session_start_startup")).context.startswith("baton: the job"), "once"


def test_a_stop_never_waits_for_a_collector_that_does_not_answer(subproc: Hook, job: JobDir,
                                                                   payload: Payloads) -> None:
    """The hook has returned its answer while the sender it started still waits for the collector."""
    import socket

    from store.monitor import exporting, launch

    job.plan(["a", "b"])
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, "BATON_TELEMETRY": "1",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{silent.getsockname()[1]}",
               "OTEL_EXPORTER_OTLP_TIMEOUT": "30000"}
        result = subproc("Stop", payload("stop"), env=env)
        assert "NEXT: a." in result.reason
        lock = Path(exporting.lock_path(job.layout))
        deadline = time.monotonic() + 20
        while not (lock.exists() and launch.busy(lock)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert launch.busy(lock), "a detached sender holds the export lock, waiting for the collector"
        conn, _ = silent.accept()  # the sender's request, never answered
        conn.close()
    finally:
        silent.close()
