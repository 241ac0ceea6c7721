"""The ``baton once`` index: intents and results folded by the snapshot, moved into shard files,
looked up by key through one shard and one ledger line, rebuilt when it does not match the ledger,
and the per-key lock that survives its holder's death only as long as the command it started."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from store.state import journal, keylock, once_keys, snapshot
from store.state.location import Layout
from store.state.snapshot import KEEP_ONCE_RESULTS, Snapshot, key_digest


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.setenv("BATON_FSYNC", "0")
    found = Layout(tmp_path / ".baton", tmp_path)
    found.root.mkdir()
    return found


def intent(layout: Layout, key: str, step: str = "s") -> Dict[str, Any]:
    return journal.append(layout, step, "intent", f"run {key}", key=key)


def result(layout: Layout, key: str, exit: int = 0, outcome: str = "ran", step: str = "s") -> Dict[str, Any]:
    return journal.append(layout, step, "result", f"exit {exit}", key=key, outcome=outcome, exit=exit)


def current(layout: Layout) -> Snapshot:
    return journal.read_state(layout).snapshot


def test_the_snapshot_folds_intents_and_results_without_touching_steps(layout: Layout) -> None:
    journal.append(layout, "s", "running")
    first = intent(layout, "mail-1")
    snap = current(layout)
    assert snap.first_hash == journal.read_state(layout).snapshot.first_hash != ""
    assert list(snap.once_open) == ["mail-1"] and snap.once_open["mail-1"]["seq"] == first["seq"]
    result(layout, "mail-1", 0)
    snap = current(layout)
    assert snap.once_open == {} and snap.once_results == 1
    assert snap.once_recent[-1]["key"] == "mail-1" and snap.once_recent[-1]["exit"] == 0
    assert snap.steps["s"]["status"] == "running"  # once records leave the step alone
    assert snap.last is not None and snap.last["status"] == "running"
    assert snap.progress_seq == snap.seq  # but they are progress for the Stop hook


def test_a_retry_settlement_reopens_the_key_and_does_not_count(layout: Layout) -> None:
    intent(layout, "k")
    result(layout, "k", outcome="retry")
    snap = current(layout)
    assert snap.once_open == {} and snap.once_results == 0 and snap.once_recent == []


def test_lookup_goes_through_one_shard_and_one_line(layout: Layout) -> None:
    for i in range(40):
        intent(layout, f"k{i}")
        result(layout, f"k{i}", exit=i % 3)
    intent(layout, "open")
    snap = current(layout)
    assert snap.once_pending == {}  # every append moved its entry into a shard
    shard = once_keys.shard_path(layout, key_digest("k7"))
    assert key_digest("k7") in once_keys.read_shard(shard)
    found = once_keys.lookup(layout, snap, "k7")
    assert found is not None and (found["status"], found["key"], found["exit"]) == ("result", "k7", 1)
    opened = once_keys.lookup(layout, snap, "open")
    assert opened is not None and opened["status"] == "intent"
    assert once_keys.lookup(layout, snap, "never") is None
    assert len(list(once_keys.folder(layout).glob("*.json"))) <= 41


def test_the_snapshot_stays_small_however_many_keys(layout: Layout, chain_lines: Any) -> None:
    records: List[Dict[str, object]] = []
    for i in range(3000):
        records.append({"ts": "2026-01-01T00:00:00Z", "step": "s", "status": "intent", "note": "", "key": f"k{i}"})
        records.append({"ts": "2026-01-01T00:00:00Z", "step": "s", "status": "result", "note": "", "key": f"k{i}",
                        "outcome": "ran", "exit": 0})
    layout.ledger.write_bytes(b"".join(chain_lines(records)))
    snap = current(layout)  # rebuilt from the ledger, saved, and its index moved into the shards
    assert snap.once_results == 3000 and snap.once_pending == {}
    assert layout.snapshot.stat().st_size < 4000, "state.json grew with the number of keys"
    assert len(snap.once_recent) == KEEP_ONCE_RESULTS
    found = once_keys.lookup(layout, snap, "k2999")
    assert found is not None and found["seq"] == 6000


def test_a_pending_entry_is_read_from_the_snapshot_when_the_shard_cannot_be_written(layout: Layout) -> None:
    intent(layout, "first")
    folder = once_keys.folder(layout)
    folder.rename(folder.with_name("once-aside"))
    folder.write_text("a file where the index folder should be")  # every shard write now fails
    record = intent(layout, "second")
    snap = current(layout)
    assert key_digest("second") in snap.once_pending
    assert once_keys.lookup(layout, snap, "second") == record
    folder.unlink()
    folder.with_name("once-aside").rename(folder)
    result(layout, "second", exit=4)  # the next append moves what was pending
    snap = current(layout)
    assert snap.once_pending == {}
    found = once_keys.lookup(layout, snap, "second")
    assert found is not None and found["exit"] == 4


def test_an_index_that_points_elsewhere_is_detected_and_rebuilt(layout: Layout) -> None:
    intent(layout, "a")
    result(layout, "a", exit=5)
    intent(layout, "b")
    shard = once_keys.shard_path(layout, key_digest("a"))
    keys = once_keys.read_shard(shard)
    keys[key_digest("a")] = [3, once_keys.read_shard(once_keys.shard_path(layout, key_digest("b")))[key_digest("b")][1]]
    shard.write_text(json.dumps({"version": 1, "keys": keys}))
    with pytest.raises(once_keys.IndexMismatch):
        once_keys.lookup(layout, current(layout), "a")
    fresh = once_keys.rebuild(layout)
    found = once_keys.lookup(layout, fresh, "a")
    assert found is not None and found["exit"] == 5


def test_a_lost_snapshot_and_index_come_back_from_the_ledger(layout: Layout) -> None:
    intent(layout, "a")
    result(layout, "a", exit=2)
    layout.snapshot.unlink()
    for shard in once_keys.folder(layout).glob("*.json"):
        shard.unlink()
    snap = current(layout)
    found = once_keys.lookup(layout, snap, "a")
    assert found is not None and found["exit"] == 2
    assert list(once_keys.folder(layout).glob("*.json")), "the shards were written again"


def test_the_idempotency_key_depends_on_the_job_and_the_key_only(layout: Layout, tmp_path: Path) -> None:
    intent(layout, "k")
    first = current(layout).first_hash
    one = once_keys.idempotency_key(first, "k")
    assert one == once_keys.idempotency_key(first, "k") and one.startswith("baton-") and len(one) == 46
    assert one != once_keys.idempotency_key(first, "k2")
    assert one != once_keys.idempotency_key("0" * 32, "k")
    clone = Layout(tmp_path / "clone" / ".baton", tmp_path / "clone")
    clone.root.mkdir(parents=True)
    clone.ledger.write_bytes(layout.ledger.read_bytes())  # what a git clone of the ledger gives
    assert once_keys.idempotency_key(current(clone).first_hash, "k") == one


def test_the_key_lock_excludes_a_second_holder_and_busy_tells(layout: Layout) -> None:
    one = keylock.KeyLock(layout, "k")
    assert one.acquire(wait=False)
    assert keylock.busy(layout, "k")
    assert not keylock.KeyLock(layout, "k").acquire(wait=False)
    assert keylock.KeyLock(layout, "other").acquire(wait=False)
    one.release(remove=True)
    assert not keylock.busy(layout, "k")
    again = keylock.KeyLock(layout, "k")
    assert again.acquire(wait=False)
    again.release()


def test_a_lock_removed_by_its_holder_is_taken_again_on_the_new_file(layout: Layout) -> None:
    holder = keylock.KeyLock(layout, "k")
    assert holder.acquire(wait=False)
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
              "from pathlib import Path\nfrom store.state import keylock\nfrom store.state.location import Layout\n"
              f"lock = keylock.KeyLock(Layout(Path({str(layout.root)!r}), Path({str(layout.project)!r})), 'k')\n"
              "lock.acquire(on_wait=lambda: print('waiting', flush=True))\nprint('got', flush=True)\n")
    waiter = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert waiter.stdout is not None and waiter.stdout.readline().strip() == "waiting"
    holder.release(remove=True)  # the waiter wakes on the unlinked file, and must lock the new one
    assert waiter.stdout.readline().strip() == "got"
    assert keylock.busy(layout, "k"), "the waiter holds the lock on the file now at the path"
    waiter.kill()
    waiter.wait()


def test_a_lock_held_by_a_process_the_holder_started_outlives_the_holder(layout: Layout) -> None:
    holder = keylock.KeyLock(layout, "k")
    holder.acquire()
    child = subprocess.Popen(["sleep", "30"], pass_fds=(holder.fd,))
    holder.release()  # our descriptor is closed, as when `baton once` is killed
    try:
        assert keylock.busy(layout, "k")
    finally:
        child.kill()
        child.wait()
    assert not keylock.busy(layout, "k")


def test_unknown_lines_skip_running_keys_and_are_bounded(layout: Layout) -> None:
    for i in range(7):
        intent(layout, f"k{i}", step="deliver")
    running = keylock.KeyLock(layout, "k0")
    running.acquire()
    try:
        lines = once_keys.unknown_news(layout, current(layout))
    finally:
        running.release()
    assert len(lines) == once_keys.SHOWN + 1
    assert lines[0].startswith("UNKNOWN: k1 (deliver) started ") and lines[0].endswith(
        'settle: baton once --settle k1 done|failed|retry "<evidence>"')
    assert lines[-1].startswith("UNKNOWN: 3 more side effects have an unknown outcome")
    assert all("k0 " not in line for line in lines)


def test_once_lines_show_the_results_of_the_step_in_progress(layout: Layout) -> None:
    intent(layout, "pr", step="open-pr")
    journal.append(layout, "open-pr", "result", "exit 0", key="pr", outcome="ran", exit=0, id="https://x/pull/7")
    intent(layout, "other", step="elsewhere")
    result(layout, "other", step="elsewhere")
    lines = once_keys.result_news(current(layout), "open-pr")
    assert len(lines) == 1
    assert lines[0].startswith("ONCE: pr (open-pr) ran at ") and ", id https://x/pull/7;" in lines[0]
    assert once_keys.result_news(current(layout), "nothing") == []


def test_from_bytes_refuses_a_snapshot_whose_once_fields_have_the_wrong_shape() -> None:
    good = Snapshot().to_bytes()
    assert Snapshot.from_bytes(good) is not None
    data = json.loads(good)
    data["once_pending"] = []
    assert Snapshot.from_bytes(json.dumps(data).encode()) is None
    data = json.loads(good)
    data["version"] = snapshot.VERSION - 1
    assert Snapshot.from_bytes(json.dumps(data).encode()) is None


def test_waiting_for_a_lock_does_not_spin(layout: Layout) -> None:
    holder = keylock.KeyLock(layout, "k")
    holder.acquire()
    script = (f"import sys, time; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
              "from pathlib import Path\nfrom store.state import keylock\nfrom store.state.location import Layout\n"
              f"lock = keylock.KeyLock(Layout(Path({str(layout.root)!r}), Path({str(layout.project)!r})), 'k')\n"
              "lock.acquire()\nprint(time.process_time())\n")
    waiter = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    holder.release()
    out, _ = waiter.communicate(timeout=30)
    assert float(out) < 0.5, "the waiter burned CPU while it waited"
