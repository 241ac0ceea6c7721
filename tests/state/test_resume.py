"""A replay that saves its progress (store.state.resume): going on from a saved progress gives the
full replay's state exactly, a rewritten ledger makes it start over, a held lock means no save, a
saved progress never goes back, and a hook's read of a fresh clone moves on at each run."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import types
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from store.ledger.ledger import GENESIS, format_line, seal
from store.state import journal, once_keys, resume, snapshot
from store.state.job import Job
from store.state.location import Layout

STEPS = ["held", "b", "c"]


def records(count: int) -> Iterator[bytes]:
    """A parallel job: w1 claims ``held`` first and never ends it; then work on b and c by other
    workers, a ``baton once`` pair, a blank line and a damaged line (its hash no longer matches)."""
    prev, seq = GENESIS, 0
    for i in range(count):
        if i == 0:
            fields: dict = {"step": "held", "status": "claim", "worker": "w1"}
        elif i % 97 == 0:
            fields = {"step": "b", "status": "intent" if i % 2 else "result", "key": f"k{i // 194}", "note": "x"}
        elif i % 5 == 0:
            fields = {"step": "b" if i % 2 else "c", "status": "claim", "worker": f"w{2 + i % 3}"}
        else:
            fields = {"step": "b" if i % 3 else "c", "status": ["running", "failed", "done"][i % 3], "note": f"n{i}"}
        seq += 1
        record = seal({"ts": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z", "session": f"s{i % 4}", **fields},
                      seq, prev)
        line = format_line(record)
        if i == count // 3:
            line = line.replace(b'"ts"', b'"tz"', 1)
        if i == count // 2:
            line = b"\n" + line
        prev = record["hash"]
        yield line


def make_job(tmp_path: Path, count: int = 3000) -> Layout:
    layout = Layout(tmp_path / ".baton", tmp_path)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"steps": [{"id": s, "needs": []} for s in STEPS]}))
    layout.ledger.write_bytes(b"".join(records(count)))
    return layout


def full(layout: Layout) -> bytes:
    return snapshot.rebuild(layout.ledger).snapshot.to_bytes()


def full_saved(layout: Layout, elsewhere: Path) -> bytes:
    """The ``state.json`` a reader with all the time it needs saves for the same ledger."""
    other = Layout(elsewhere / ".baton", elsewhere)
    other.root.mkdir(parents=True)
    snap = snapshot.rebuild(layout.ledger).snapshot
    once_keys.flush(other, snap)  # saving moves the once keys into their shard files
    return snap.to_bytes()


def step_by_step(layout: Layout) -> List[int]:
    """Advance with no time at all (one check's worth of lines each time), saving and reading back
    each time; the offsets reached."""
    offsets = []
    while True:
        made, how = resume.advance(layout, resume.read(layout), 0.0)
        if how.done:
            assert made.snapshot.to_bytes() == full(layout)
            return offsets
        assert resume.save(layout, made) == ""
        offsets.append(made.snapshot.offset)


def test_a_replay_resumed_from_its_saved_progress_ends_exactly_as_the_full_replay(tmp_path: Path) -> None:
    layout = make_job(tmp_path)
    offsets = step_by_step(layout)
    assert len(offsets) > 5 and offsets == sorted(set(offsets))
    assert any("line 1001:" in p for p in snapshot.rebuild(layout.ledger).snapshot.problems)  # counted across runs


def test_a_rewritten_ledger_makes_the_replay_start_over(tmp_path: Path) -> None:
    layout = make_job(tmp_path)
    made, how = resume.advance(layout, None, 0.0)
    assert not how.done and resume.save(layout, made) == ""
    assert resume.read(layout) is not None
    data = bytearray(layout.ledger.read_bytes())
    at = made.snapshot.offset - 5  # inside the last line folded: same size, other bytes
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    layout.ledger.write_bytes(bytes(data))
    assert resume.read(layout) is None
    layout.ledger.write_bytes(layout.ledger.read_bytes()[: made.snapshot.offset - 1])  # cut before it
    assert resume.read(layout) is None


def test_no_save_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    layout = make_job(tmp_path)
    made, _ = resume.advance(layout, None, 0.0)
    fd = os.open(layout.file(resume.REPLAY_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another open file: flock conflicts even within one process
        assert resume.save(layout, made) == "another process is saving its progress"
        assert not os.path.exists(layout.file(resume.REPLAY))
    finally:
        os.close(fd)
    assert resume.save(layout, made) == ""


def test_a_saved_progress_never_goes_back(tmp_path: Path) -> None:
    layout = make_job(tmp_path)
    first, _ = resume.advance(layout, None, 0.0)
    further, _ = resume.advance(layout, resume.Progress.from_bytes(first.to_bytes()), 0.0)
    assert further.snapshot.offset > first.snapshot.offset
    assert resume.save(layout, further) == ""
    assert resume.save(layout, first) == "a saved progress is as far along"
    saved = resume.read(layout)
    assert saved is not None and saved.snapshot.offset == further.snapshot.offset


@pytest.fixture
def in_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process counts as a hook call (what hooks.adapter.main sets), with no time to replay."""
    adapter = types.ModuleType("hooks.adapter")
    adapter.IN_HOOK = True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hooks.adapter", adapter)
    monkeypatch.setenv(resume.ENV, "0")


def test_a_hook_reads_on_at_each_run_and_saves_the_whole_state_at_the_end(tmp_path: Path, in_hook: Any) -> None:
    layout = make_job(tmp_path)
    seen = []
    while True:
        loaded = journal.read_state(layout, steps=STEPS, with_claims=True)
        if loaded.reading is None:
            break
        done, total, unsaved = loaded.reading
        assert unsaved == "" and total == layout.ledger.stat().st_size and loaded.partial
        seen.append(done)
    assert len(seen) > 5 and seen == sorted(set(seen))
    assert layout.snapshot.read_bytes() == full_saved(layout, tmp_path / "other")
    assert not os.path.exists(layout.file(resume.REPLAY))


def test_where_the_progress_cannot_be_saved_the_hook_answers_and_the_brief_says_so(
        tmp_path: Path, in_hook: Any) -> None:
    layout = make_job(tmp_path)
    os.mkdir(layout.file(resume.REPLAY_LOCK))  # as unusable as a read-only folder, even for root
    loaded = journal.read_state(layout, steps=STEPS, with_claims=True)
    assert loaded.reading is not None and loaded.reading[2].startswith("cannot open replay.lock: ")
    assert not os.path.exists(layout.file(resume.REPLAY))
    job = Job(layout, {"BATON_WORKER": "w9"})
    assert job.next is None and job.reading is not None
    lines = job.brief().splitlines()
    assert lines[2].startswith("NEXT: not known yet (reading the ledger: ") and "this progress is not kept" in lines[2]
    assert "LEFT RUNNING" not in job.brief()


def test_an_approval_while_the_hook_is_still_reading_says_so_and_records_nothing(
        tmp_path: Path, in_hook: Any) -> None:
    from store.base.errors import BatonError
    from store.cli import actions

    layout = make_job(tmp_path)
    layout.plan.write_text(json.dumps({"steps": [{"id": "held", "needs": []}, {"id": "b", "needs": []},
                                                 {"id": "c", "needs": [], "approval": True}]}))
    before = layout.ledger.read_bytes()
    with pytest.raises(BatonError, match=r"^baton has not finished reading this job's long ledger \(reading the "
                                         r"ledger: .* MB\), so it cannot tell yet whether step c waits for an "
                                         r"approval; nothing was recorded: send /baton:approve c again in a moment"):
        actions.approve_step(layout, {"HOME": str(tmp_path / "home")}, "c", "looks right", "test")
    assert layout.ledger.read_bytes() == before
