"""Job limits: which are reached, cost counted from session records too, and the brief's LIMIT line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict

import pytest

from store.monitor import limits
from store.monitor.outcomes import save_counters
from store.state import journal
from store.state.job import Job
from store.state.location import Layout
from store.state.snapshot import Snapshot

if TYPE_CHECKING:
    pass


def job_with(layout: Layout, plan: Dict[str, Any], counters: Dict[str, Any]) -> Job:
    layout.plan.write_text(json.dumps(plan))
    save_counters(layout, counters)
    return Job(layout, {})


def test_cost_is_the_larger_of_the_transcripts_and_the_session_records() -> None:
    caps = {"cost_usd": 1.0}
    assert limits.reached(caps, Snapshot(session_cost_usd=0.99), {"cost_usd": 0.5}) == []
    assert limits.reached(caps, Snapshot(session_cost_usd=1.0), {"cost_usd": 0.5}) == ["cost_usd 1 of 1"]
    assert limits.reached(caps, Snapshot(session_cost_usd=0.2), {"cost_usd": 1.5}) == ["cost_usd 1.5 of 1"]


def test_the_limit_line_names_what_was_reached_and_how_to_go_on(layout: Layout) -> None:
    job = job_with(layout, {"steps": ["a", "b"], "limits": {"turns": 2, "tool_calls": 10}},
                   {"turns": 2, "total_calls": 10})
    [line] = limits.job_news(job)
    assert line.startswith("LIMIT: tool_calls 10 of 10, turns 2 of 2 reached: only reading is allowed; stop and tell")
    assert "they raise limits.tool_calls, limits.turns in .baton/plan.json" in line
    assert f"\n{line}" in job.brief("", limits.job_news(job))


def test_no_limit_line_below_the_limits_without_limits_or_when_the_job_is_complete(layout: Layout) -> None:
    assert limits.job_news(job_with(layout, {"steps": ["a"], "limits": {"turns": 3}}, {"turns": 2})) == []
    assert limits.job_news(job_with(layout, {"steps": ["a"]}, {"turns": 99})) == []
    journal.append(layout, "a", "done")
    assert limits.job_news(job_with(layout, {"steps": ["a"], "limits": {"turns": 1}}, {"turns": 5})) == []


def test_baton_brief_shows_the_limit_line(layout: Layout, main: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    job_with(layout, {"steps": ["a"], "limits": {"cost_usd": 0.5}}, {})
    journal.append(layout, "a", "session", "", session="s1", ended="completed", cost_usd=0.6)
    code, out, _ = main(["brief"])
    assert code == 0
    assert "\nLIMIT: cost_usd 0.6 of 0.5 reached" in out
