"""When the job's state stops a run, with which code, and what the person and the ledger are told."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any, Dict

from store.monitor.outcomes import save_counters
from store.run import stops
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    pass

AGAIN = "baton run --plugin-dir /opt/baton -- --permission-mode acceptEdits"


def job(layout: Layout, plan: Dict[str, Any]) -> Job:
    layout.plan.write_text(json.dumps(plan))
    return Job(layout, {})


def test_a_complete_job_is_done(layout: Layout) -> None:
    journal.append(layout, "a", "done")
    stop = stops.from_job(job(layout, {"steps": ["a"]}), {}, "claude", "", AGAIN)
    assert stop is not None and (stop.outcome, stop.code, stop.note) == ("done", 0, "")


def test_a_waiting_step_says_what_to_run_to_approve_and_to_go_on(layout: Layout) -> None:
    plan = {"steps": ["a", {"id": "ship it", "title": "publish", "approval": True}]}
    journal.append(layout, "a", "done")
    stop = stops.from_job(job(layout, plan), {}, "/opt/claude", "/opt/baton", AGAIN)
    assert stop is not None and (stop.outcome, stop.code, stop.note) == ("approval", 3, "")
    lines = stop.message.splitlines()
    assert lines[0] == "waiting for a person's approval of ship it (publish)."
    approve = lines[1].split("approve:", 1)[1].strip()
    assert shlex.split(approve) == ["/opt/claude", "--plugin-dir", "/opt/baton", "-p", '/baton:approve "ship it"']
    assert lines[-1].strip() == f"then go on: {AGAIN}"


def test_a_waiting_step_with_a_parked_call_says_the_session_resumes_there(layout: Layout) -> None:
    plan = {"steps": ["a", {"id": "ship", "approval": True}]}
    journal.append(layout, "a", "done")
    parked = {"session": "0123456789abcdef", "parked": {"id": "t1", "tool": "Bash", "what": "Bash: make ship"}}
    stop = stops.from_job(job(layout, plan), {}, "claude", "", AGAIN, parked)
    assert stop is not None and stop.code == 3
    assert stop.message.splitlines()[-2:] == [
        f"  then go on: {AGAIN}", "            (it resumes session 01234567 at the call it parked: Bash: make ship)"]


def test_a_limit_is_a_stop_with_the_next_instruction(layout: Layout) -> None:
    plan = {"steps": ["a", {"id": "b", "title": "port it"}], "limits": {"cost_usd": 1.0, "turns": 9}}
    journal.append(layout, "a", "session", "", session="s1", ended="completed", cost_usd=1.25)
    save_counters(layout, {"turns": 3, "cost_usd": 0.5})
    stop = stops.from_job(job(layout, plan), {"turns": 3, "cost_usd": 0.5}, "claude", "", AGAIN)
    assert stop is not None and (stop.outcome, stop.code) == ("limit", 4)
    assert stop.note == ("limit reached: cost_usd 1.25 of 1. NEXT: a. To go on, raise limits.cost_usd in "
                         ".baton/plan.json, then run `baton run` again.")
    assert stop.message == stop.note.replace("`baton run`", f"`{AGAIN}`")
    assert stops.from_job(job(layout, {**plan, "limits": {"cost_usd": 2.0}}), {}, "claude", "", AGAIN) is None


def test_what_a_session_recorded_is_outcomes_and_approvals_not_intents(layout: Layout) -> None:
    plan = {"steps": ["a", "b", {"id": "c", "approval": True}]}
    journal.append(layout, "a", "running")
    before = job(layout, plan).snap
    journal.append(layout, "a", "done")
    journal.append(layout, "b", "running")
    journal.append(layout, "b", "session", "", ended="killed")
    assert stops.recorded_since(before, job(layout, plan).snap) == ["a done"]
    middle = job(layout, plan).snap
    journal.append(layout, "c", "approved", "", by="person")
    journal.append(layout, "b", "failed", "red")
    assert sorted(stops.recorded_since(middle, job(layout, plan).snap)) == ["b failed", "c approved"]


def test_the_run_stops_name_what_happened_and_keep_the_ledger_note_short(layout: Layout) -> None:
    current = job(layout, {"steps": [{"id": "a", "title": "fetch"}]})
    idle = stops.idle(current, 3, 2, "exit code 1 without a result: error: unknown option '--bogus'", AGAIN)
    assert (idle.outcome, idle.code) == ("idle", 5)
    assert idle.note.startswith("no progress: 3 session(s) in a row recorded nothing (--max-idle-sessions 3). "
                                "NEXT: a - fetch. The last one ended: exit code 1 without a result: error: unknown")
    assert "refused 2 tool call(s)" in idle.note and AGAIN in idle.message and AGAIN not in idle.note
    api = stops.api(current, "401 authentication_error: invalid x-api-key", 1, True, AGAIN)
    assert (api.outcome, api.code) == ("api", 6)
    assert api.note.startswith("stopped after an API error that retrying will not fix: 401 authentication_error")
    tired = stops.api(current, "529 overloaded_error", 51, False, AGAIN)
    assert "51 API errors in a row (--max-retries), the last: 529 overloaded_error" in tired.note
    interrupted = stops.interrupted(current, "SIGINT", AGAIN)
    assert interrupted.code == 130
    assert interrupted.note == "interrupted by SIGINT. NEXT: a - fetch. Run `baton run` to go on."
