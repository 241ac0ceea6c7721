"""The job's figures, folded incrementally from the ledger, the events and the transcripts: what each
step and each session spent, attempts and how they ended, approval waits, tool outcomes, alerts,
rotation, rebuilds, and folding in pieces giving what folding at once gives; the figures file,
of which a Stop hook reads and writes only the parts its fold changes, read back as exactly what
was folded, and damaged, torn or old (version 1) files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple

import pytest
from transcripts import assistant, cost_state, subagent_transcript, tool_result, usage, write

from store.monitor import compact, figures, outcomes, stored, summary, watch
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    pass

A, B = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"


def plan(layout: Layout, data: Any) -> None:
    layout.plan.write_text(json.dumps(data if isinstance(data, dict) else {"steps": data}))


def record(layout: Layout, step: str, status: str, ts: str, session: str = A, note: str = "", **extra: Any) -> None:
    journal.append(layout, step, status, note, ts=ts, session=session, **extra)


def started(layout: Layout, session: str, ts: str, transcript: Path, source: str = "startup") -> None:
    outcomes.append_event(layout, {"kind": "session", "event": "start", "ts": ts, "session": session,
                                   "source": source, "transcript": str(transcript)})


def ended(layout: Layout, session: str, ts: str, reason: str = "other") -> None:
    outcomes.append_event(layout, {"kind": "session", "event": "end", "ts": ts, "session": session, "reason": reason})


def tool(layout: Layout, step: str, ts: str, ok: bool = True, session: str = A, changed: Any = (),
         error: str = "") -> None:
    outcomes.append_event(layout, {"ts": ts, "session": session, "agent": "", "step": step, "tool": "Bash",
                                   "target": "make", "ok": ok, "error": error, "changed": list(changed)})


def status(layout: Layout, now: float = 1796040000.0) -> Dict[str, Any]:
    job = Job(layout, {})
    return summary.summarize(job, figures.refresh(layout, job.plan), now=now)


def steps(data: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {s["id"]: s for s in data["steps"]}


def test_tokens_go_to_the_step_that_was_next_when_the_model_wrote(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b", "c"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(100, 10, 1000, 50), "2026-11-30T10:00:05.100Z", ("text", "tool_use"))
          + assistant("m2", "r2", usage(200, 20), "2026-11-30T10:00:09.400Z"))
    record(layout, "a", "done", "2026-11-30T10:00:09Z")  # in the same second as m2: m2 was written before it
    write(path, assistant("m3", "r3", usage(7, 3), "2026-11-30T10:00:10.050Z"), append=True)
    data = status(layout)
    by_step = steps(data)
    assert by_step["a"]["tokens"] == {"input": 300, "output": 30, "cache_read": 1000, "cache_creation": 50,
                                      "total": 1380}
    assert by_step["b"]["tokens"]["input"] == 7 and by_step["c"]["tokens"]["total"] == 0
    assert data["tokens"]["total"] == 1380 + 10 and data["turns"] == 3
    assert by_step["a"]["attempts"] == [{"n": 1, "session": A, "start": "2026-11-30T10:00:00Z",
                                         "end": "2026-11-30T10:00:09Z", "outcome": "done", "notes": []}]
    assert data["current"]["step"] == "b" and data["current"]["since"] == "2026-11-30T10:00:09Z"


def test_a_session_without_a_cost_entry_has_unknown_cost_never_zero(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(100, 10), "2026-11-30T10:00:05Z"))
    data = status(layout)
    assert data["cost"]["reported_usd"] is None and data["cost"]["estimated_usd"] is None
    assert data["cost"]["complete"] is False and data["cost"]["unreported_sessions"] == 1
    assert data["sessions"][0]["cost_usd"] is None and data["steps"][0]["cost_usd"] is None
    assert data["cost"]["projected_usd"] is None


def test_a_killed_session_is_lost_its_tokens_priced_at_the_rate_of_the_others(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b", "c", "d"])
    killed, finished = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", killed)
    write(killed, assistant("m1", "r1", usage(1000, 0), "2026-11-30T10:00:05Z"))
    record(layout, "a", "running", "2026-11-30T10:00:06Z", A)
    started(layout, B, "2026-11-30T11:00:00Z", finished)
    write(finished, assistant("m2", "r2", usage(2000, 0), "2026-11-30T11:00:05Z")
          + [cost_state(0.02, {"input": 2000})])
    record(layout, "a", "done", "2026-11-30T11:00:06Z", B)
    ended(layout, B, "2026-11-30T11:00:07Z")
    data = status(layout)
    sessions = {s["id"]: s for s in data["sessions"]}
    assert (sessions[A]["ended"], sessions[A]["cost_usd"], sessions[A]["end"]) == ("lost", None, "2026-11-30T10:00:06Z")
    assert (sessions[B]["ended"], sessions[B]["cost_usd"], sessions[B]["cost_complete"]) == ("other", 0.02, True)
    assert data["cost"]["reported_usd"] == 0.02 and not data["cost"]["complete"]
    assert data["cost"]["estimated_usd"] == pytest.approx(0.03)  # 1000 more input tokens at B's 0.00001 each
    assert [(x["session"], x["outcome"]) for x in steps(data)["a"]["attempts"]] == [(A, "left"), (B, "done")]
    assert steps(data)["a"]["retries"] == 0, "a running record and its done are one attempt"


def test_a_session_killed_in_the_second_the_next_one_started_is_lost(layout: Layout, tmp_path: Path) -> None:
    """Times are whole seconds. A session that had been working, whose last record shares its second
    with the next session's start, is lost once that session goes on in a later second (it once
    stayed "open", running for ever); until then nothing tells them apart, and it is open."""
    plan(layout, ["a", "b", "c"])
    started(layout, A, "2026-11-30T10:00:00Z", tmp_path / "a.jsonl")
    record(layout, "a", "running", "2026-11-30T10:00:06Z", A)
    started(layout, B, "2026-11-30T10:00:06Z", tmp_path / "b.jsonl")
    sessions = {s["id"]: s for s in status(layout)["sessions"]}
    assert [sessions[s]["ended"] for s in (A, B)] == ["open", "open"]
    record(layout, "a", "done", "2026-11-30T10:00:07Z", B)
    sessions = {s["id"]: s for s in status(layout)["sessions"]}
    assert (sessions[A]["ended"], sessions[A]["end"]) == ("lost", "2026-11-30T10:00:06Z")
    assert (sessions[B]["ended"], sessions[B]["end"]) == ("open", None)


def test_sessions_started_together_stay_open_whichever_works_first(layout: Layout, tmp_path: Path) -> None:
    """Two workers of a parallel job begin in one second and one of them works on while the other
    still waits for its first answer: neither is lost; a third that begins later than the quiet
    one's last sign of life makes it lost, as it always did."""
    plan(layout, {"steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []}]})
    started(layout, A, "2026-11-30T10:00:00Z", tmp_path / "a.jsonl")
    started(layout, B, "2026-11-30T10:00:00Z", tmp_path / "b.jsonl")
    record(layout, "b", "running", "2026-11-30T10:00:03Z", B)  # A, the first seen, is the quiet one
    assert [s["ended"] for s in status(layout)["sessions"]] == ["open", "open"]
    third = "cccccccc-0000-4000-8000-000000000003"
    started(layout, third, "2026-11-30T10:00:02Z", tmp_path / "c.jsonl")
    sessions = {s["id"]: s for s in status(layout)["sessions"]}
    assert [sessions[s]["ended"] for s in (A, B, third)] == ["lost", "open", "open"]


def test_a_resumed_session_has_two_runs_and_its_latest_cumulative_cost(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(10, 10), "2026-11-30T10:00:05Z")
          + [cost_state(0.002, {"input": 10, "output": 10})])
    ended(layout, A, "2026-11-30T10:00:06Z")
    assert status(layout)["sessions"][0]["cost_usd"] == 0.002
    started(layout, A, "2026-11-30T12:00:00Z", path, source="resume")
    write(path, assistant("m2", "r2", usage(5, 5), "2026-11-30T12:00:05Z")
          + [cost_state(0.003, {"input": 15, "output": 15})],
          append=True)
    ended(layout, A, "2026-11-30T12:00:06Z")
    [session] = status(layout)["sessions"]
    assert session["cost_usd"] == 0.003 and session["cost_complete"]
    assert [(r["start"], r["end"], r["ended"]) for r in session["runs"]] == [
        ("2026-11-30T10:00:00Z", "2026-11-30T10:00:06Z", "other"),
        ("2026-11-30T12:00:00Z", "2026-11-30T12:00:06Z", "other")]
    assert session["tokens"]["total"] == 30 and session["turns"] == 2


def test_a_session_resumed_after_a_kill_has_a_partial_cost(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(30, 0), "2026-11-30T10:00:05Z"))
    started(layout, A, "2026-11-30T12:00:00Z", path, source="resume")
    write(path, assistant("m2", "r2", usage(10, 0), "2026-11-30T12:00:05Z") + [cost_state(0.001, {"input": 10})],
          append=True)
    [session] = status(layout)["sessions"]
    assert session["runs"][0]["ended"] == "lost" and session["cost_usd"] == 0.001
    assert session["cost_complete"] is False, "the cost covers 10 of its 40 tokens"


def test_subagent_tokens_count_for_the_session_and_the_step_but_not_as_turns(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a"])
    path = tmp_path / "proj" / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(101, 8, 1000, 51), "2026-11-30T10:00:01Z", ("tool_use",)))
    status(layout)
    sub = write(subagent_transcript(path, "a6dbbb4f"), assistant("m2", "r2", usage(102, 9), "2026-11-30T10:00:02Z",
                                                                 sidechain=True))
    write(path, assistant("m3", "r3", usage(104, 11), "2026-11-30T10:00:03Z")
          + [cost_state(0.005, {"input": 307, "output": 28, "read": 1000, "write": 51})],
          append=True)
    data = status(layout)
    assert data["tokens"]["input"] == 307 and data["turns"] == 2
    assert data["steps"][0]["tokens"]["input"] == 307 and data["sessions"][0]["cost_complete"]
    assert str(sub) in figures.load(layout)["transcripts"]


def test_tool_outcomes_per_step_and_session(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    tool(layout, "a", "2026-11-30T10:00:01Z", changed=["x.py", "y.py"])
    tool(layout, "a", "2026-11-30T10:00:02Z", ok=False, error="Exit code 1")
    tool(layout, "a", "2026-11-30T10:00:03Z", changed=["x.py", "z.py"])
    tool(layout, "b", "2026-11-30T10:00:04Z", ok=False, session=B, error="Exit code 2")
    data = status(layout)
    a, b = data["steps"]
    assert (a["calls"], a["failures"], a["changed_files"], a["last_error"]["error"]) == (3, 1, 3, "Exit code 1")
    assert (b["calls"], b["failures"]) == (1, 1)
    assert (data["tools"]["calls"], data["tools"]["failures"], data["changed_files"]) == (4, 2, 3)
    assert data["tools"]["last_error"] == {"ts": "2026-11-30T10:00:04Z", "step": "b", "session": B, "tool": "Bash",
                                           "target": "make", "error": "Exit code 2"}
    assert {s["id"]: (s["calls"], s["failures"]) for s in data["sessions"]} == {A: (3, 1), B: (1, 1)}


def test_retries_validation_and_artifacts(layout: Layout) -> None:
    plan(layout, {"steps": [{"id": "a", "validate": "true"}, "b"]})
    record(layout, "a", "failed", "2026-11-30T10:00:01Z", note="validate failed (exit 1): red")
    record(layout, "a", "failed", "2026-11-30T10:00:02Z", note="gave up")
    record(layout, "a", "done", "2026-11-30T10:00:03Z", artifacts=["dist/a.whl", {"path": "report.html"}])
    record(layout, "b", "done", "2026-11-30T10:00:04Z", validation={"status": "skipped"})
    data = status(layout)
    a, b = data["steps"]
    assert (a["attempt"], a["retries"], a["validation"]) == (3, 2, "passed")
    assert a["artifacts"] == ["dist/a.whl", "report.html"]
    assert [x["outcome"] for x in a["attempts"]] == ["failed", "failed", "done"]
    assert b["validation"] == "skipped" and (data["retries"], data["artifacts"]) == (2, 2)


def test_approval_wait_runs_from_when_the_step_became_next_until_a_person_approved(layout: Layout) -> None:
    plan(layout, {"steps": ["a", {"id": "design", "approval": True}, {"id": "ship", "approval": True}]})
    record(layout, "a", "done", "2026-11-30T10:00:00Z")
    record(layout, "design", "approved", "2026-11-30T10:42:00Z", session="", by="person", sig="x")
    record(layout, "design", "done", "2026-11-30T10:50:00Z")
    data = status(layout, now=1796036400.0 + 600)
    design, ship = steps(data)["design"], steps(data)["ship"]
    assert design["approval_wait_s"] == 42 * 60
    assert ("waiting", "2026-11-30T10:00:00Z", "2026-11-30T10:42:00Z") in [
        (x["outcome"], x["start"], x["end"]) for x in design["attempts"]]
    assert ship["approval_wait_s"] == pytest.approx(600 + 9 * 60 + 59.001, abs=1), "still waiting: counted up to now"
    assert data["current"]["waiting_for_approval"] is True


def test_records_from_baton_run_say_how_a_session_ended(layout: Layout) -> None:
    plan(layout, ["a"])
    tool(layout, "a", "2026-11-30T10:00:01Z")
    record(layout, "a", "session", "2026-11-30T10:05:00Z", session=A, ended="turn_cap", cost_usd=0.5, turns=40)
    [session] = status(layout)["sessions"]
    assert (session["ended"], session["cost_usd"], session["cost_complete"]) == ("turn_cap", 0.5, True)


def test_a_resumed_session_costs_the_sum_of_its_records_as_the_snapshot_and_the_limits_say(layout: Layout) -> None:
    plan(layout, {"steps": ["a"], "limits": {"cost_usd": 10}})
    tool(layout, "a", "2026-11-30T10:00:01Z")
    record(layout, "a", "session", "2026-11-30T10:05:00Z", session=A, ended="api_error", cost_usd=0.5)
    record(layout, "a", "session", "2026-11-30T10:09:00Z", session=A, ended="completed", cost_usd=0.25)
    record(layout, "a", "session", "2026-11-30T10:15:00Z", session=B, ended="completed", cost_usd=1.0)
    data = status(layout)
    assert {s["id"]: s["cost_usd"] for s in data["sessions"]} == {A: 0.75, B: 1.0}
    assert data["cost"]["reported_usd"] == Job(layout, {}).snap.session_cost_usd == 1.75
    assert data["limits"]["cost_usd"] == {"limit": 10, "value": 1.75}
    behind = summary.summarize(Job(layout, {}), figures.new(), now=1796040000.0)  # figures not caught up yet
    assert behind["cost"]["reported_usd"] is None and behind["limits"]["cost_usd"]["value"] == 1.75


@pytest.mark.parametrize("in_transcript, recorded, reported", [(0.002, 0.003, 0.003), (0.004, 0.003, 0.004)])
def test_a_session_with_two_reports_of_its_cost_counts_the_later_one(
        layout: Layout, tmp_path: Path, in_transcript: float, recorded: float, reported: float) -> None:
    plan(layout, ["a"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, assistant("m1", "r1", usage(10, 10), "2026-11-30T10:00:05Z")
          + [cost_state(in_transcript, {"input": 10, "output": 10})])
    record(layout, "a", "session", "2026-11-30T10:00:07Z", session=A, ended="completed", cost_usd=recorded)
    [session] = status(layout)["sessions"]
    assert (session["cost_usd"], session["cost_complete"]) == (reported, True)


def test_alerts_are_folded_from_the_events(layout: Layout) -> None:
    plan(layout, ["a"])
    outcomes.append_event(layout, {"kind": "alert", "ts": "2026-11-30T10:00:01Z", "alert": "limit", "key": "limit:x",
                                   "step": "a", "session": A, "message": "job limit reached: x"})
    data = status(layout)
    assert data["alerts"] == [{"ts": "2026-11-30T10:00:01Z", "alert": "limit", "step": "a", "session": A,
                               "message": "job limit reached: x"}]
    assert data["alerts_total"] == 1


def test_events_rotated_between_folds_are_not_lost(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    plan(layout, ["a"])
    monkeypatch.setattr(outcomes, "EVENTS_CAP", 400)
    status(layout)
    for i in range(40):
        tool(layout, "a", f"2026-11-30T10:00:{i:02d}Z")
    assert layout.events.with_name("events.jsonl.1").exists()
    assert status(layout)["tools"]["calls"] == 40


def test_the_figures_are_rebuilt_when_the_ledger_is_replaced(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    record(layout, "a", "done", "2026-11-30T10:00:01Z")
    assert status(layout)["steps"][0]["attempts"][0]["outcome"] == "done"
    layout.ledger.unlink()
    layout.snapshot.unlink()
    record(layout, "a", "failed", "2026-11-30T10:00:05Z", note="replaced")
    record(layout, "b", "running", "2026-11-30T10:00:06Z")
    data = status(layout)
    assert [x["outcome"] for x in data["steps"][0]["attempts"]] == ["failed"]
    assert data["steps"][1]["attempts"][0]["outcome"] == "running"


def _story(layout: Layout, tmp_path: Path) -> List[Any]:
    """A job told in small pieces, each a callable that adds one more thing."""
    path = tmp_path / "s.jsonl"
    pieces: List[Any] = [lambda: started(layout, A, "2026-11-30T10:00:00Z", path)]
    for n, step in enumerate(["a", "b", "c"]):
        ts = f"2026-11-30T10:0{n + 1}"
        pieces += [
            lambda n=n, ts=ts: write(path, assistant(f"m{n}", f"r{n}", usage(10 * n + 1, n + 2, 100, 5), ts + ":00.5Z",
                                                     ("text", "tool_use")), append=True),
            lambda step=step, ts=ts: tool(layout, step, ts + ":01Z", ok=step != "b", changed=[f"{step}.txt"]),
            lambda step=step, ts=ts: record(layout, step, "done", ts + ":02Z"),
        ]
    pieces.append(lambda: write(path, [cost_state(0.01, {"input": 33, "output": 9, "read": 300, "write": 15})],
                                append=True))
    return pieces


def rebuilt_alike(layout: Layout) -> Dict[str, Any]:
    """The status from the figures as folded so far equals the status from figures rebuilt at once
    (the file removed); the rebuilt one is returned."""
    folded = status(layout)
    os.unlink(figures.path_of(layout))
    at_once = status(layout)
    assert folded["steps"] == at_once["steps"]
    assert {k: folded[k] for k in ("tokens", "turns", "tools", "cost", "sessions")} == {
        k: at_once[k] for k in ("tokens", "turns", "tools", "cost", "sessions")}
    return at_once


def stop_fold(layout: Layout, session: str, transcript: Path) -> Dict[str, Any]:
    """What the Stop hook of ``session`` does with the figures: read them, fold, save; its figures."""
    return watch.catch_up(Job(layout, {}), {}, session, str(transcript))


@pytest.mark.parametrize("between", ["status", "stop"])
def test_folding_piece_by_piece_gives_what_folding_at_once_gives(layout: Layout, tmp_path: Path, between: str) -> None:
    plan(layout, ["a", "b", "c", "d"])
    for piece in _story(layout, tmp_path):
        piece()
        if between == "status":
            status(layout)
        else:
            stop_fold(layout, A, tmp_path / "s.jsonl")
    at_once = rebuilt_alike(layout)
    assert at_once["tokens"]["total"] == 33 + 9 + 300 + 15 and at_once["cost"]["complete"]


def test_unrecorded_work_shows_as_left_running_and_a_retry_starts_when_the_last_try_ended(
        layout: Layout, tmp_path: Path) -> None:
    plan(layout, {"steps": ["a", "b", {"id": "c", "approval": True}]})
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    record(layout, "a", "failed", "2026-11-30T10:00:10Z")
    record(layout, "a", "done", "2026-11-30T10:00:20Z")
    write(path, assistant("m1", "r1", usage(5, 5), "2026-11-30T10:00:25Z"))  # a turn on b, never recorded
    ended(layout, A, "2026-11-30T10:00:30Z")
    started(layout, B, "2026-11-30T11:00:00Z", tmp_path / "b.jsonl")
    write(tmp_path / "b.jsonl", assistant("m2", "r2", usage(5, 5), "2026-11-30T11:00:02Z"))  # a turn on c: waiting
    record(layout, "b", "done", "2026-11-30T11:00:01Z", session=B)
    ended(layout, B, "2026-11-30T11:00:05Z")
    by_step = steps(status(layout))
    assert [(x["start"], x["end"], x["outcome"]) for x in by_step["a"]["attempts"]] == [
        ("2026-11-30T10:00:00Z", "2026-11-30T10:00:10Z", "failed"),
        ("2026-11-30T10:00:10Z", "2026-11-30T10:00:20Z", "done")]
    assert [(x["n"], x["session"], x["end"], x["outcome"]) for x in by_step["b"]["attempts"]] == [
        (0, A, "2026-11-30T10:00:30Z", "left"), (1, B, "2026-11-30T11:00:01Z", "done")]
    assert [x["outcome"] for x in by_step["c"]["attempts"]] == ["waiting"], "a step waiting for a person was not left"


def test_a_copied_state_folder_is_not_counted_twice(layout: Layout, tmp_path: Path) -> None:
    import shutil

    plan(layout, ["a"])
    for i in range(5):
        tool(layout, "a", f"2026-11-30T10:00:0{i}Z", ok=i != 2)
    assert status(layout)["tools"]["calls"] == 5
    copy = tmp_path / "restored"
    shutil.copytree(layout.project, copy)  # new inodes, same bytes: a backup restored, a folder moved
    moved = Layout(copy / ".baton", copy)
    tool(moved, "a", "2026-11-30T10:00:09Z")
    data = status(moved)
    assert (data["tools"]["calls"], data["tools"]["failures"]) == (6, 1)


def test_status_reads_a_transcript_to_its_end_and_a_stop_one_chunk_at_a_time(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.monitor import transcript

    plan(layout, ["a"])
    path = tmp_path / "s.jsonl"
    started(layout, A, "2026-11-30T10:00:00Z", path)
    write(path, [line for n in range(40) for line in assistant(f"m{n}", f"r{n}", usage(1, 1), "2026-11-30T10:00:01Z")])
    monkeypatch.setattr(transcript, "CHUNK", 2048)  # a few responses per read
    job = Job(layout, {})
    fig = figures.load(layout)
    fig = figures.catch_up(fig, layout, job.plan, {A})  # as a Stop hook: one chunk
    assert 0 < fig["tokens"][0] < 40
    assert status(layout)["tokens"]["input"] == 40, "baton status reads on to the end"


def test_past_a_few_hundred_sessions_the_earliest_are_merged_and_every_total_stays(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.monitor import compact

    plan(layout, [f"s{i}" for i in range(12)])
    paths = []
    for i in range(12):
        sid = f"{i:08d}-0000-4000-8000-000000000000"
        path = tmp_path / f"{i}.jsonl"
        paths.append((sid, path))
        started(layout, sid, f"2026-11-30T1{i // 10}:{i % 10}0:00Z", path)
        lines = assistant(f"m{i}", f"r{i}", usage(100, 10, 1000, 5), f"2026-11-30T1{i // 10}:{i % 10}0:05Z")
        ends = [cost_state(0.01, {"input": 100, "output": 10, "read": 1000, "write": 5})] if i % 3 else []
        write(path, lines + ends)  # every third session was killed: no cost
        tool(layout, f"s{i}", f"2026-11-30T1{i // 10}:{i % 10}0:06Z", session=sid, ok=i % 4 != 0)
        record(layout, f"s{i}", "done", f"2026-11-30T1{i // 10}:{i % 10}0:07Z", session=sid)
    whole = status(layout)
    os.unlink(figures.path_of(layout))
    monkeypatch.setattr(compact, "KEEP_SESSIONS", 5)
    merged = status(layout)
    assert len(merged["sessions"]) == 6 and merged["sessions"][0]["id"] == "*"
    assert merged["sessions"][0]["ended"] == "7 earlier sessions" and merged["sessions_total"] == 12
    for key in ("tokens", "turns", "tools", "retries"):
        assert merged[key] == whole[key], key
    assert merged["cost"] == whole["cost"]
    assert [s["tokens"] for s in merged["steps"]] == [s["tokens"] for s in whole["steps"]]
    assert len(figures.load(layout)["sessions"]) == 6
    sid, path = paths[0]  # the earliest session, merged, is resumed: its transcript is not read twice
    started(layout, sid, "2026-11-30T12:00:00Z", path, source="resume")
    write(path, assistant("late", "late", usage(1, 1), "2026-11-30T12:00:05Z"), append=True)
    assert status(layout)["tokens"]["input"] == whole["tokens"]["input"] + 1


def test_a_hook_folds_a_long_ledger_a_part_at_a_time_and_status_all_of_it(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    plan(layout, ["a", "b"])
    for n in range(7):
        record(layout, "a", "running", f"2026-11-30T10:00:0{n}Z")
    monkeypatch.setattr(figures, "LEDGER_BUDGET", 3)
    job = Job(layout, {})
    fig = figures.catch_up(figures.new(), layout, job.plan, {A})  # as the Stop hook of session A
    assert fig["ledger"][1] == 3, "three records this time, the rest at the next calls"
    fig = figures.catch_up(fig, layout, job.plan, {A})
    assert fig["ledger"][1] == 6
    assert figures.catch_up(fig, layout, job.plan)["ledger"][1] == 7, "baton status folds all"


def _every_kind(layout: Layout, tmp_path: Path) -> List[Tuple[str, Path, Callable[[], Any]]]:
    """A job told in pieces, each with the session whose Stop hook folds it: every kind of record,
    event and transcript entry, an approval wait, an alert, three sessions (one of them merged
    when two are kept) and the merged one resumed."""
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    cid = "cccccccc-0000-4000-8000-000000000003"
    alert = {"kind": "alert", "ts": "2026-11-30T10:00:09Z", "alert": "failures", "key": "failures", "step": "a",
             "session": A, "message": "the same call failed 3 times"}
    return [
        (A, a, lambda: started(layout, A, "2026-11-30T10:00:00Z", a)),
        (A, a, lambda: write(a, assistant("m1", "r1", usage(10, 2, 100, 5), "2026-11-30T10:00:01Z"))),
        (A, a, lambda: record(layout, "a", "running", "2026-11-30T10:00:02Z")),
        (A, a, lambda: tool(layout, "a", "2026-11-30T10:00:03Z", changed=["x.py"])),
        (A, a, lambda: tool(layout, "a", "2026-11-30T10:00:04Z", ok=False, error="Exit code 1")),
        (A, a, lambda: write(a, [tool_result("refused [baton:writes]", True, "2026-11-30T10:00:05Z")], append=True)),
        (A, a, lambda: record(layout, "a", "failed", "2026-11-30T10:00:06Z", note="tests red")),
        (A, a, lambda: record(layout, "a", "done", "2026-11-30T10:00:07Z", artifacts=["out.txt"])),
        (A, a, lambda: outcomes.append_event(layout, alert)),
        (A, a, lambda: record(layout, "b", "approved", "2026-11-30T10:10:00Z", session="", by="person", sig="x")),
        (A, a, lambda: ended(layout, A, "2026-11-30T10:10:01Z")),
        (B, b, lambda: started(layout, B, "2026-11-30T11:00:00Z", b)),
        (B, b, lambda: write(b, assistant("m2", "r2", usage(20, 4), "2026-11-30T11:00:01Z")
                             + [cost_state(0.02, {"input": 20, "output": 4})])),
        (B, b, lambda: record(layout, "b", "done", "2026-11-30T11:00:02Z", session=B)),
        (cid, c, lambda: started(layout, cid, "2026-11-30T12:00:00Z", c)),
        (cid, c, lambda: write(c, assistant("m3", "r3", usage(30, 6), "2026-11-30T12:00:01Z"))),
        (cid, c, lambda: record(layout, "c", "session", "2026-11-30T12:00:02Z", session=cid, ended="turn_cap",
                                cost_usd=0.03, turns=1)),
        (A, a, lambda: started(layout, A, "2026-11-30T13:00:00Z", a, source="resume")),
        (A, a, lambda: write(a, assistant("m4", "r4", usage(1, 1), "2026-11-30T13:00:01Z"), append=True)),
    ]


def test_what_a_stop_saves_reads_back_as_the_figures_it_folded(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan(layout, {"steps": ["a", {"id": "b", "approval": True}, "c", "d"]})
    monkeypatch.setattr(compact, "KEEP_SESSIONS", 2)
    merged = False
    for session, transcript, piece in _every_kind(layout, tmp_path):
        piece()
        fig = stop_fold(layout, session, transcript)
        stored.decode_all(fig)
        assert figures.load(layout) == fig
        digests = figures.load(layout, lazy=True)["sessions"]
        assert digests == {sid: stored.digest(entry) for sid, entry in fig["sessions"].items()}
        merged = merged or bool(fig.get("closed"))
    assert merged and fig["sessions"]["*"]["merged"] == 2, "A was merged, then B once A came back"
    assert fig["marks"] and fig["alerts"] and fig["waits"] and fig["refusals"] == {"writes": 1}


def test_a_session_s_digest_prices_it_as_its_entry_does(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.monitor import costs

    plan(layout, {"steps": ["a", {"id": "b", "approval": True}, "c", "d"]})
    monkeypatch.setattr(compact, "KEEP_SESSIONS", 2)
    for _, _, piece in _every_kind(layout, tmp_path):
        piece()
    folded = list(figures.refresh(layout, Job(layout, {}).plan)["sessions"].values())
    made = [{"run": {"ended": "turn_cap", "cost_usd": 0.5, "turns": 3}, "cost": 0.2, "covered": 5, "w": 10.0,
             "tokens": [1, 2, 3, 4], "runs": [[1.0, 2.0, "other"]], "last": 2.0},  # a runner's report, then a later one
            {"run": None, "cost": 0.3, "covered": 4, "tokens": [1, 2, 3, 4], "w": 7.0, "last": 3.0},
            {"cost": None, "priced": 0.1, "tokens": [1, 0, 0, 0], "w": 1.0, "last": 4.0},  # older per-message prices
            {"cost": None, "tokens": [0, 0, 0, 0], "w": 0.0},  # nothing reported
            {"cost": 1.0, "covered": 3, "tokens": [1, 1, 1, 1], "w": 2.0, "unreported": 2, "merged": 3}]  # earlier ones
    for entry in folded + made:
        digest = json.loads(json.dumps(stored.digest(entry)))  # as the file gives it back
        whole, short = costs.session_costs({"s": entry})["s"], costs.session_costs({"s": digest})["s"]
        assert [getattr(whole, k) for k in whole.__slots__] == [getattr(short, k) for k in short.__slots__]
        assert digest["last"] == entry.get("last")


def parts(layout: Layout) -> Dict[str, str]:
    """The figures file's lines by what they hold: ``head``, ``history``, ``digest:ID``,
    ``session:ID``, ``bars:STEP``, ``list:NAME``."""
    head, history, *lines = Path(figures.path_of(layout)).read_text(encoding="ascii").split("\n")[:-1]
    named = json.loads(head)["parts"]
    names = [f"{kind}:{s}" for kind in ("digest", "session") for s in named["sessions"]]
    names += [f"bars:{s}" for s in named["bars"]] + [f"list:{k}" for k in named["lists"]]
    return {"head": head, "history": history, **dict(zip(names, lines))}


def test_a_stop_decodes_and_writes_only_the_parts_its_fold_changes(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b"])
    path = tmp_path / "s.jsonl"
    started(layout, B, "2026-11-30T09:00:00Z", tmp_path / "b.jsonl")
    started(layout, A, "2026-11-30T10:00:00Z", path)
    record(layout, "a", "done", "2026-11-30T10:00:01Z")
    record(layout, "b", "running", "2026-11-30T10:00:02Z")
    tool(layout, "b", "2026-11-30T10:00:03Z", ok=False)
    stop_fold(layout, A, path)
    before = parts(layout)
    write(path, assistant("m1", "r1", usage(10, 2), "2026-11-30T10:00:04Z"))  # a model response, on b
    fig = stop_fold(layout, A, path)
    assert fig["steps"]["b"]["tokens"] == [10, 2, 0, 0]
    assert [k for k in ("marks", "alerts", "waits") if k in fig] == []
    assert ["bars" in fig["steps"][s] for s in ("a", "b")] == [False, False]
    assert fig["sessions"][B] == stored.digest(figures.load(layout)["sessions"][B]), "the other session: its digest"
    after = parts(layout)
    assert [k for k in before if before[k] != after[k]] == ["head", f"digest:{A}", f"session:{A}"]
    record(layout, "b", "done", "2026-11-30T10:00:05Z")
    fig = stop_fold(layout, A, path)
    assert ["bars" in fig["steps"][s] for s in ("a", "b")] == [False, True]
    changed = ["head", "history", f"digest:{A}", f"session:{A}", "bars:b"]  # b done: NEXT moved on
    assert [k for k in after if after[k] != parts(layout)[k]] == changed


@pytest.mark.parametrize("damage", ["bars:a", "list:marks"])
def test_a_damaged_part_is_rebuilt_from_the_ledger_the_events_and_the_transcripts(
        layout: Layout, tmp_path: Path, damage: str) -> None:
    plan(layout, ["a", "b", "c", "d"])
    path = tmp_path / "s.jsonl"
    pieces = _story(layout, tmp_path)
    for piece in pieces[:5]:  # ends with a failed tool call on b: there are marks
        piece()
        stop_fold(layout, A, path)
    lines = parts(layout)
    text = Path(figures.path_of(layout)).read_text(encoding="ascii")
    Path(figures.path_of(layout)).write_text(text.replace(lines[damage] + "\n", '[["torn"\n'), encoding="ascii")
    if damage == "bars:a":
        record(layout, "a", "failed", "2026-11-30T10:02:01Z", note="reopened")  # a's bars are needed
    else:
        tool(layout, "b", "2026-11-30T10:02:01Z", ok=False)  # the marks are needed
    fig = stop_fold(layout, A, path)
    stored.decode_all(fig)
    assert figures.load(layout) == fig and fig["tokens"] == [1 + 11, 2 + 3, 200, 10], "the transcript read again"
    for piece in pieces[5:]:
        piece()
        stop_fold(layout, A, path)
    rebuilt_alike(layout)


def test_a_torn_or_padded_file_reads_as_no_figures(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b", "c", "d"])
    for piece in _story(layout, tmp_path):
        piece()
    stop_fold(layout, A, tmp_path / "s.jsonl")
    where = Path(figures.path_of(layout))
    whole = where.read_text(encoding="ascii")
    assert figures.load(layout) != figures.new()
    torn = (whole[:-1], whole[:len(whole) // 2], whole + "[]", whole + "[]\n", "{" + whole,
            whole.replace('"version":3', '"version":4', 1))
    for text in torn:
        where.write_text(text, encoding="ascii")
        assert figures.load(layout) == figures.new()
        assert figures.load(layout, lazy=True) == figures.new()


def test_version_1_figures_are_read_on_and_left_for_an_older_baton(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a", "b", "c", "d"])
    pieces = _story(layout, tmp_path)
    for piece in pieces[:5]:
        piece()
    old = {**figures.refresh(layout, Job(layout, {}).plan), "version": 1}  # what baton wrote before
    os.unlink(figures.path_of(layout))
    version_1 = Path(figures.folder(layout)) / figures.OLD_FILE
    version_1.write_text(json.dumps(old, separators=(",", ":")), encoding="ascii")
    assert figures.load(layout) == old
    for piece in pieces[5:]:
        piece()
        stop_fold(layout, A, tmp_path / "s.jsonl")
    assert json.loads(version_1.read_text(encoding="ascii")) == old
    assert figures.load(layout)["ledger"] != old["ledger"], "the new file is read, not the old one"
    by_stops = status(layout)
    os.unlink(figures.path_of(layout))
    version_1.unlink()
    assert by_stops["steps"] == status(layout)["steps"]


@pytest.mark.parametrize("reported", [False, True], ids=["weighted tokens", "dollars"])
def test_steps_costing_more_and_more_raise_cost_rising_as_the_status_document_shows(
        layout: Layout, tmp_path: Path, reported: bool) -> None:
    plan(layout, [f"s{i}" for i in range(9)])
    for sid, steps, size, usd in ((A, range(5), 100, 0.05), (B, range(5, 8), 1000, 0.9)):  # B pays more a token
        path = tmp_path / f"{sid}.jsonl"
        started(layout, sid, f"2026-11-30T1{steps[0] // 5}:00:00Z", path)
        for i in steps:
            write(path, assistant(f"m{i}", f"r{i}", usage(size, 10), f"2026-11-30T1{i // 5}:0{i}:01Z"), append=True)
            record(layout, f"s{i}", "done", f"2026-11-30T1{i // 5}:0{i}:02Z", session=sid)
        if reported:
            write(path, [cost_state(usd, {"input": size * len(steps), "output": 10 * len(steps)})], append=True)
        fig = stop_fold(layout, sid, path)
    [rising] = [a for a in watch.conditions(Job(layout, {}), {}, fig) if a.kind == "cost-rising"]
    done = [s for s in status(layout)["steps"] if s["status"] == "done"]
    each = [s["cost_estimated_usd"] if reported else s["tokens"]["input"] + 5 * s["tokens"]["output"] for s in done]
    times = sum(each[-3:]) / 3 / (sum(each) / len(each))
    assert round(times, 1) == (2.5 if reported else 2.2)
    assert f"used {times:.1f}x the job's average {'cost' if reported else 'weighted tokens'} per step" in rising.model
