"""The quick read from the ledger's end: for every plan step it gives what a full rebuild gives,
whatever the ledger holds, and it says which steps it did not reach when time runs out."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.ledger.ledger import GENESIS, format_line, seal
from store.state import quickread, snapshot
from store.state.snapshot import Snapshot

STEPS = ["a", "b c", "d\u00e9", 'q"uote', "back\\slash", "never"]
STATUSES = ["running", "done", "failed", "skipped", "approved", "stop", "quarantine"]


def _write(path: Path, entries: List[Tuple[str, str, str]]) -> List[bytes]:
    lines, prev = [], GENESIS
    for seq, (step, status, session) in enumerate(entries, start=1):
        record = seal({"ts": f"2026-01-01T00:00:{seq % 60:02d}Z", "step": step, "status": status,
                       "note": f"{step} {status} {seq}", "session": session, "attempt": 1}, seq, prev)
        lines.append(format_line(record))
        prev = record["hash"]
    path.write_bytes(b"".join(lines))
    return lines


def _same_for_the_plan(quick: Snapshot, full: Snapshot, approvals: List[str]) -> None:
    for step in STEPS:
        assert quick.steps.get(step) == full.steps.get(step), step
    for step in approvals:
        assert quick.approvals.get(step) == full.approvals.get(step), step
    assert (quick.seq, quick.hash, quick.offset, quick.end_mark) == (full.seq, full.hash, full.offset, full.end_mark)
    assert (quick.last, quick.progress_seq, quick.first_ts) == (full.last, full.progress_seq, full.first_ts)


ENTRIES = st.lists(st.tuples(st.sampled_from(STEPS[:-1] + ["not-in-plan"]), st.sampled_from(STATUSES),
                             st.sampled_from(["s1", "s2", ""])), min_size=0, max_size=400)


@settings(max_examples=60)
@given(entries=ENTRIES, tail=st.sampled_from([64, 4096, 1 << 17]), chunk=st.sampled_from([300, 1 << 20]))
def test_the_quick_read_agrees_with_a_rebuild_on_every_plan_step(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, entries: List[Any],
        tail: int, chunk: int) -> None:
    monkeypatch.setattr(quickread, "TAIL_BYTES", tail)
    monkeypatch.setattr(quickread, "MIN_TAIL", 3)
    monkeypatch.setattr(quickread, "SEARCH_CHUNK", chunk)
    path = tmp_path_factory.mktemp("q") / "steps.jsonl"
    _write(path, entries)
    approvals = ["a", "b c", "never"]
    loaded = quickread.read(path, STEPS, approvals, None, 60.0)
    assert loaded.partial and loaded.unresolved == () and loaded.torn == 0
    _same_for_the_plan(loaded.snapshot, snapshot.rebuild(path).snapshot, approvals)


@settings(max_examples=30)
@given(entries=ENTRIES, cut=st.integers(0, 400))
def test_from_a_saved_snapshot_it_reads_only_what_follows(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, entries: List[Any],
        cut: int) -> None:
    monkeypatch.setattr(quickread, "TAIL_BYTES", 512)
    monkeypatch.setattr(quickread, "MIN_TAIL", 2)
    folder = tmp_path_factory.mktemp("q")
    path = folder / "steps.jsonl"
    lines = _write(path, entries)
    head = folder / "head.jsonl"
    head.write_bytes(b"".join(lines[:cut]))
    base = snapshot.rebuild(head).snapshot
    loaded = quickread.read(path, STEPS, ["a"], base, 60.0)
    _same_for_the_plan(loaded.snapshot, snapshot.rebuild(path).snapshot, ["a"])


def test_out_of_time_it_names_what_it_did_not_find(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quickread, "TAIL_BYTES", 256)
    monkeypatch.setattr(quickread, "MIN_TAIL", 1)
    path = tmp_path / "steps.jsonl"
    _write(path, [("a", "done", "")] + [("b c", "failed", "")] * 200)
    loaded = quickread.read(path, STEPS, [], None, 0.0)
    assert loaded.unresolved == ("a", "back\\slash", "d\u00e9", "never", 'q"uote')
    assert loaded.snapshot.steps["b c"]["status"] == "failed" and "a" not in loaded.snapshot.steps
    found = quickread.read(path, STEPS, [], None, 60.0)
    assert found.unresolved == () and found.snapshot.steps["a"]["status"] == "done"


def test_a_torn_tail_and_a_damaged_last_line_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    _write(path, [("a", "done", ""), ("b c", "running", "")])
    path.write_bytes(path.read_bytes() + b"garbage\n" + b'{"seq":4,"ts')
    loaded = quickread.read(path, STEPS, [], None, 60.0)
    assert loaded.torn == len(b'{"seq":4,"ts') and loaded.snapshot.problems
    assert loaded.snapshot.steps["a"]["status"] == "done" and loaded.snapshot.seq == 2


