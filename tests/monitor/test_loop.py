"""The Stop decision, called directly: budget, progress, per-session state, usage from transcripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import pytest

from store.monitor import figures, loop, outcomes
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    pass


@pytest.fixture
def layout(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s1")
    return layout


def plan(layout: Layout, data: Any) -> None:
    layout.plan.write_text(json.dumps(data if isinstance(data, dict) else {"steps": data}))


def decide(layout: Layout, session: str = "s1", transcript: str = "") -> Optional[str]:
    return loop.decide(Job(layout, {}), session, transcript)


def stops(layout: Layout) -> List[Dict[str, Any]]:
    lines = layout.ledger.read_text().splitlines() if layout.ledger.exists() else []
    return [r for r in map(json.loads, lines) if r["status"] == "stop"]


def test_default_budget_is_twelve_blocks_with_progress(layout: Layout) -> None:
    steps = [f"s{i}" for i in range(20)]
    plan(layout, steps)
    for i in range(loop.DEFAULT_BUDGET):
        reason = decide(layout)
        assert reason is not None and f"sent this session back {i + 1} of at most 12 times" in reason
        journal.append(layout, steps[i], "done")
    assert decide(layout) is None
    assert stops(layout)[0]["note"].endswith("this session's budget of 12 continuations is spent")


def test_the_reason_carries_the_title(layout: Layout) -> None:
    plan(layout, {"steps": [{"id": "a", "title": "Write the parser"}]})
    assert "NEXT: a - Write the parser." in str(decide(layout))


def test_a_failed_record_is_progress(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    assert decide(layout) is not None
    journal.append(layout, "a", "failed", "tests red")
    assert "NEXT: a." in str(decide(layout))


def test_an_approval_is_progress_but_a_stop_record_is_not(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    assert decide(layout) is not None
    journal.append(layout, "a", "stop", "x")
    assert decide(layout) is None
    journal.append(layout, "b", "approved", "", sig="bad")
    assert decide(layout) is not None


def test_turns_are_counted_on_every_stop(layout: Layout) -> None:
    plan(layout, ["a"])
    for _ in range(3):
        decide(layout)
    assert outcomes.read_counters(layout)["turns"] == 3


def test_the_stop_record_carries_the_step_and_why(layout: Layout) -> None:
    plan(layout, {"steps": [{"id": "a", "approval": True}]})
    assert decide(layout) is None
    assert decide(layout) is None
    (record,) = stops(layout)
    assert (record["step"], record["status"]) == ("a", "stop")
    assert record["note"] == "session ended with a still NEXT: waiting for a person's approval of a"


def test_a_new_state_of_progress_gets_a_new_stop_record(layout: Layout) -> None:
    plan(layout, {"limits": {"stop_blocks": 1}, "steps": ["a", "b", "c"]})
    assert decide(layout) is not None
    assert decide(layout) is None  # nothing recorded since the block
    journal.append(layout, "a", "done")
    assert decide(layout) is None  # budget spent
    assert [r["note"].split(": ", 1)[1] for r in stops(layout)] == [
        "nothing recorded since baton last sent the session back", "this session's budget of 1 continuations is spent"]


def test_sessions_are_kept_apart_and_pruned(layout: Layout) -> None:
    plan(layout, ["a"])
    for i in range(loop.KEEP_SESSIONS + 5):
        assert decide(layout, session=f"session-{i}") is not None
    kept = outcomes.read_counters(layout)["stops"]
    assert len(kept) == loop.KEEP_SESSIONS
    assert "session-0" not in kept and f"session-{loop.KEEP_SESSIONS + 4}" in kept


def test_an_empty_session_id_still_gets_a_budget(layout: Layout) -> None:
    plan(layout, ["a", "b"])
    assert decide(layout, session="") is not None
    assert decide(layout, session="") is None
    assert "-" in outcomes.read_counters(layout)["stops"]


def usage_line(tokens: int, cost: Optional[float] = None) -> str:
    entry: Dict[str, Any] = {"type": "assistant", "message": {"usage": {"input_tokens": tokens, "output_tokens": 0}}}
    if cost is not None:
        entry["costUSD"] = cost
    return json.dumps(entry) + "\n"


def test_usage_is_read_incrementally_and_only_whole_lines(layout: Layout, tmp_path: Path) -> None:
    plan(layout, {"limits": {"cost_usd": 1.0}, "steps": ["a", "b", "c"]})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(usage_line(10, 0.25) + usage_line(5) + '{"message": {"usage": {"input_tokens": 99')
    decide(layout, transcript=str(transcript))
    counters = outcomes.read_counters(layout)
    assert (counters["tokens"], counters["cost_usd"]) == (15, 0.25)
    offset = figures.load(layout)["transcripts"][str(transcript)][1]
    assert offset == len((usage_line(10, 0.25) + usage_line(5)).encode())
    decide(layout, transcript=str(transcript))
    assert outcomes.read_counters(layout)["tokens"] == 15, "the same lines are never counted twice"
    with transcript.open("a") as handle:
        handle.write("}}}\n" + usage_line(1, 0.75) + "not json\n" + json.dumps([1, 2]) + "\n")
    journal.append(layout, "a", "done")
    assert decide(layout, transcript=str(transcript)) is None
    counters = outcomes.read_counters(layout)
    assert (counters["tokens"], counters["cost_usd"]) == (115, 1.0)
    assert "limit reached: cost_usd 1 of 1" in stops(layout)[-1]["note"]


def test_usage_ignores_non_integer_counts(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a"])
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"message": {"usage": {"input_tokens": "9", "output_tokens": 2.5,
                                                            "cache_read_input_tokens": None}}}) + "\n")
    decide(layout, transcript=str(transcript))
    assert outcomes.read_counters(layout)["tokens"] == 0


def test_a_transcript_that_cannot_be_read_is_skipped(layout: Layout, tmp_path: Path) -> None:
    plan(layout, ["a"])
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    assert decide(layout, transcript=str(folder)) is not None
    assert decide(layout, transcript=str(tmp_path / "missing.jsonl")) is None  # second stop, no progress


def test_counters_survive_a_corrupt_file(layout: Layout) -> None:
    plan(layout, ["a"])
    layout.counters.write_text("{not json")
    assert decide(layout) is not None
    assert outcomes.read_counters(layout)["turns"] == 1
