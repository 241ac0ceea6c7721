"""The session and stop records: how a session ended, only the new part of a resumed session's cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from store.base.errors import BatonError
from store.run.records import parked_on, record_session, record_stop, recorded_cost
from store.state import journal
from store.state.location import Layout

if TYPE_CHECKING:
    pass


@pytest.fixture
def layout(layout: Layout) -> Layout:
    layout.plan.write_text('{"steps": ["a", "b"]}')
    return layout


def test_a_session_record_says_how_it_ended_and_is_not_step_progress(layout: Layout) -> None:
    journal.append(layout, "a", "done", "built")
    record = record_session(layout, "b", "s1", "api_error", "529 overloaded_error", 0.5, 3, 1)
    assert {k: record[k] for k in ("step", "status", "note", "session", "ended", "cost_usd", "turns", "exit")} == {
        "step": "b", "status": "session", "note": "api_error: 529 overloaded_error", "session": "s1",
        "ended": "api_error", "cost_usd": 0.5, "turns": 3, "exit": 1}
    snap = journal.read_state(layout).snapshot
    assert snap.last is not None and (snap.last["step"], snap.last["status"]) == ("a", "done")
    assert set(snap.steps) == {"a"} and snap.session_cost_usd == 0.5


def test_a_resumed_session_counts_only_its_new_cost(layout: Layout) -> None:
    record_session(layout, "a", "s1", "api_error", "", 0.25)
    record_session(layout, "a", "other", "completed", "", 1.0)
    again = record_session(layout, "a", "s1", "completed", "", 0.75)  # Claude Code reports 0.25 + 0.5
    assert again["cost_usd"] == 0.5
    assert recorded_cost(layout, "s1") == 0.75 and recorded_cost(layout, "") == 0.0
    assert journal.read_state(layout).snapshot.session_cost_usd == 1.75


def test_unknown_figures_are_left_out_and_unknown_endings_refused(layout: Layout) -> None:
    record = record_session(layout, "a", "", "crashed", "exit code 1 without a result")
    assert "cost_usd" not in record and "turns" not in record and "exit" not in record and record["session"] == ""
    with pytest.raises(BatonError, match="unknown session ending 'fine'"):
        record_session(layout, "a", "s1", "fine")


def test_a_stop_record_names_the_outcome_and_who_wrote_it(layout: Layout) -> None:
    record = record_stop(layout, "b", "limit", "limit reached: turns 2 of 2")
    assert (record["status"], record["outcome"], record["via"], record["session"]) == ("stop", "limit", "baton run", "")


def test_the_session_to_resume_is_the_latest_one_if_it_parked_a_call_on_the_step(layout: Layout) -> None:
    assert parked_on(layout, "b") is None
    call = {"id": "toolu_1", "tool": "Bash", "what": "Bash: make ship", "step": "b"}
    record_session(layout, "a", "s1", "parked", "parked Bash: make ship", 0.1, 2, 0, call)
    found = parked_on(layout, "b")
    assert found is not None and found["session"] == "s1" and found["parked"] == call
    assert parked_on(layout, "a") is None  # it waits for b's approval, not a's
    journal.append(layout, "b", "approved", "by a person")  # other records do not hide it
    assert parked_on(layout, "b") is not None
    record_session(layout, "b", "s2", "completed")  # a later session: the parked one was given up
    assert parked_on(layout, "b") is None
