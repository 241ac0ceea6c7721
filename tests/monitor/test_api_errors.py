"""Turns an API error ended (`outcomes.turn_failed`, `api_errors`): counted once whether the StopFailure
hook or `baton run` saw them first, folded into figures saved before the count existed, and news for
the brief until progress."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from store.monitor import api_errors, figures, outcomes
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Sandbox


@pytest.fixture
def layout(sandbox: Sandbox) -> Layout:
    found = Layout(sandbox.project / ".baton", sandbox.project)
    found.root.mkdir()
    found.plan.write_text(json.dumps({"steps": ["a", "b"]}))
    return found


@pytest.mark.parametrize("message, details, shown", [
    ("API Error: 529 Overloaded. This is a server-side issue, usually temporary.", None, "API Error: 529 Overloaded"),
    ("API Error: 429 slow.", "", "API Error: 429 slow"),
    ("Not logged in \u00b7 Please run /login", None, "Not logged in \u00b7 Please run /login"),
    ("Prompt is too long", "200000 > 190000 tokens", "Prompt is too long (200000 > 190000 tokens)"),
    ("line one\nline two. more", None, "line one line two"),
    (None, None, ""),
])
def test_the_detail_is_the_first_sentence_on_one_line(message: object, details: object, shown: str) -> None:
    assert api_errors.detail_of(message, details) == shown


def test_baton_run_counts_a_turn_the_hook_missed_and_not_one_it_counted(layout: Layout) -> None:
    start = "2026-01-01T00:00:00Z"
    assert outcomes.turn_failed(layout, "s1", "a", "server_error", "API Error: 529 Overloaded", 0, "StopFailure")
    # baton run, after the same session ended: the hook got there (same session, since its start)
    assert not outcomes.turn_failed(layout, "s1", "a", "529 overloaded_error", "x", 0, "baton run", since=start)
    # another session's error, or one from before this session started, is this one's to count
    assert outcomes.turn_failed(layout, "s2", "a", "network", "Connection error", 0, "baton run", since=start)
    assert not outcomes.turn_failed(layout, "s2", "a", "network", "again", 0, "baton run", since=start)
    later = "2999-01-01T00:00:00Z"
    assert outcomes.turn_failed(layout, "s2", "a", "network", "a later run", 0, "baton run", since=later)
    counters = outcomes.read_counters(layout)
    assert counters["api_errors"] == 3 and counters["api_error"]["detail"] == "a later run"
    kinds = [json.loads(line)["via"] for line in layout.events.read_text().splitlines()]
    assert kinds == ["StopFailure", "baton run", "baton run"]


def test_figures_saved_before_the_count_existed_fold_it_in(layout: Layout) -> None:
    plan = Job(layout, {}).plan
    fig = figures.refresh(layout, plan)
    for key in ("api_errors", "api_error"):
        assert key not in fig  # what figures saved by an older baton look like
    outcomes.turn_failed(layout, "s1", "a", "rate_limit", "API Error: 429", 0, "StopFailure")
    fig = figures.refresh(layout, plan)
    assert fig["api_errors"] == 1 and fig["api_error"]["error"] == "rate_limit"
    assert figures.load(layout)["api_errors"] == 1  # saved with them, read back whole


def test_the_news_lasts_until_a_step_is_recorded_not_a_session_record(layout: Layout) -> None:
    job = Job(layout, {})
    outcomes.turn_failed(layout, "s1", "a", "overloaded", "API Error: 529", job.snap.progress_seq, "baton run")
    counters = outcomes.read_counters(layout)
    assert api_errors.news(counters, Job(layout, {}).snap)
    journal.append(layout, "a", "session", "api_error: 529", session="s1", ended="api_error")
    assert api_errors.news(counters, Job(layout, {}).snap), "a session record is not progress"
    journal.append(layout, "a", "done", "did it")
    assert api_errors.news(counters, Job(layout, {}).snap) == []
