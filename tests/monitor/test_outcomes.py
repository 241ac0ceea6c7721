"""Tool outcomes: the events file and its rotation, counters and their resets, alert thresholds,
and concurrent hooks that lose no update."""

from __future__ import annotations

import json
import multiprocessing
from typing import TYPE_CHECKING, Any, Dict, List, Mapping

import pytest

from store.monitor import outcomes
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Sandbox


@pytest.fixture
def layout(sandbox: Sandbox) -> Layout:
    return Layout(sandbox.project / ".baton", sandbox.project)


def event(ok: bool = True, target: str = "a.txt", error: str = "", changed: Any = ()) -> Dict[str, Any]:
    return {"ts": "2026-01-01T00:00:00Z", "session": "s", "agent": "", "step": "a", "tool": "Bash",
            "target": target, "ok": ok, "error": error, "changed": list(changed)}


def update(layout: Layout, ev: Mapping[str, Any], seq: int = 0, step: str = "a",
           limits: Mapping[str, float] = {}) -> List[str]:  # noqa: B006 - read only
    return outcomes.update(layout, ev, seq, step, limits)


def test_update_creates_the_state_folder_and_one_line(layout: Layout) -> None:
    assert update(layout, event()) == []
    assert [json.loads(line) for line in layout.events.read_text().splitlines()] == [event()]
    assert outcomes.read_counters(layout)["total_calls"] == 1


@pytest.mark.parametrize("content", [b"", b"{", b"[1, 2]", b"\xff", b"null"])
def test_unreadable_counters_start_afresh(layout: Layout, content: bytes) -> None:
    layout.root.mkdir()
    layout.counters.write_bytes(content)
    assert outcomes.read_counters(layout) == {}
    update(layout, event())
    assert outcomes.read_counters(layout)["total_calls"] == 1


def test_calls_alert_every_n_calls_and_only_with_a_step(layout: Layout) -> None:
    limits = {"calls_without_record": 2}
    assert update(layout, event(), limits=limits) == []
    assert "2 tool calls since the last recorded step" in update(layout, event(), limits=limits)[0]
    assert update(layout, event(), limits=limits) == []
    assert "4 tool calls" in update(layout, event(), limits=limits)[0]
    assert update(layout, event(), step="", limits=limits) == [], "no NEXT (job complete): nothing to remind"


def test_a_new_record_or_a_new_step_resets_what_belongs_to_it(layout: Layout) -> None:
    update(layout, event(ok=False, error="e"), seq=1)
    update(layout, event(changed=["x"]), seq=1)
    counters = outcomes.read_counters(layout)
    assert (counters["calls_since_record"], counters["failures_since_record"], counters["changed_count"]) == (2, 1, 1)
    update(layout, event(), seq=2)  # the ledger gained a record: same step
    counters = outcomes.read_counters(layout)
    assert (counters["calls_since_record"], counters["failures_since_record"], counters["changed"]) == (1, 0, ["x"])
    update(layout, event(), seq=3, step="b")
    counters = outcomes.read_counters(layout)
    assert (counters["step"], counters["changed"], counters["changed_count"], counters["total_calls"]) == (
        "b", [], 0, 4)


def test_identical_failures_alert_at_every_multiple(layout: Layout) -> None:
    failing = event(ok=False, target="pytest", error="Exit code 1")
    alerts = [bool(update(layout, failing)) for _ in range(7)]
    assert alerts == [False, False, True, False, False, True, False]
    assert outcomes.read_counters(layout)["consecutive_failures"] == 7


def test_a_different_failure_starts_a_new_run(layout: Layout) -> None:
    update(layout, event(ok=False, error="one"))
    update(layout, event(ok=False, error="one"))
    assert update(layout, event(ok=False, error="two")) == []
    assert outcomes.read_counters(layout)["consecutive_failures"] == 1
    assert outcomes.read_counters(layout)["last_failure"] == "Bash|a.txt|two"


def test_changed_files_are_counted_once_and_the_list_is_bounded(layout: Layout) -> None:
    update(layout, event(changed=["a", "b", "a"]))
    update(layout, event(changed=["b"]))
    assert outcomes.read_counters(layout)["changed_count"] == 2
    update(layout, event(changed=[f"f{i}" for i in range(outcomes.KEEP_FILES + 50)]))
    counters = outcomes.read_counters(layout)
    assert len(counters["changed"]) == outcomes.KEEP_FILES
    assert counters["changed_count"] >= outcomes.KEEP_FILES


def test_changed_files_alert_only_past_the_cap_and_on_a_change(layout: Layout) -> None:
    limits = {"changed_files": 2}
    assert update(layout, event(changed=["a", "b"]), limits=limits) == []
    over = update(layout, event(changed=["c"]), limits=limits)
    assert over == ["baton: step a has changed 3 files, over the job's limit of 2; further writes are refused "
                    "until the step is recorded."]
    assert update(layout, event(), limits=limits) == []


def test_rotation_keeps_one_old_file(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "EVENTS_CAP", 300)
    layout.root.mkdir()
    for i in range(30):
        outcomes.append_event(layout, event(target=f"t{i:02d}"))
    old = layout.events.with_name("events.jsonl.1")
    assert old.exists() and not layout.events.with_name("events.jsonl.2").exists()
    lines = old.read_text().splitlines() + layout.events.read_text().splitlines()
    assert json.loads(lines[-1])["target"] == "t29"
    assert all(json.loads(line) for line in lines)  # every line whole
    assert layout.events.stat().st_size <= 300 + len(lines[-1]) + 1


def test_event_lines_are_ascii_even_for_unicode_targets(layout: Layout) -> None:
    update(layout, event(target="r\u00e9sum\u00e9 \u2028 x", error="\u00fcber\nline"))
    raw = layout.events.read_bytes()
    assert raw.isascii() and raw.count(b"\n") == 1
    assert json.loads(raw)["target"] == "r\u00e9sum\u00e9 \u2028 x"


def _worker(root: str, project: str, count: int) -> None:
    from pathlib import Path

    for _ in range(count):
        outcomes.update(Layout(Path(root), Path(project)), event(changed=["shared"]), 0, "a", {})


def test_concurrent_hooks_lose_no_update(layout: Layout) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_worker, args=(str(layout.root), str(layout.project), 25)) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    counters = outcomes.read_counters(layout)
    assert counters["total_calls"] == 150 and counters["calls_since_record"] == 150
    assert counters["changed_count"] == 1
    lines = [json.loads(line) for line in layout.events.read_text().splitlines()]
    assert sum(1 for line in lines if "tool" in line) == 150
    alerts = [line["key"] for line in lines if line.get("kind") == "alert"]
    assert alerts == ["calls:0"], "raised once, not again at 50, 75..."
