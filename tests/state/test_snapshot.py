"""The derived snapshot: folding records in, saving it, and catching up or rebuilding from the ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Tuple

import pytest

from store.ledger import ledger
from store.ledger.ledger import GENESIS, parse_line
from store.state import snapshot
from store.state.snapshot import KEEP_SESSIONS, Snapshot

if TYPE_CHECKING:
    from conftest import ChainLines


def _rec(step: str, status: str, note: str = "", session: str = "", attempt: int = 1) -> Dict[str, Any]:
    return {"ts": "2026-01-01T00:00:00Z", "step": step, "status": status, "note": note, "session": session,
            "attempt": attempt}


STORY = [_rec("a", "running", session="s1"), _rec("a", "done", "built", session="s1"),
         _rec("b", "failed", "red", session="s2", attempt=1), _rec("c", "approved", session="s2"),
         _rec("b", "stop", "budget", session="s2")]


def _ledger(tmp_path: Path, lines: List[bytes], torn: bytes = b"") -> Path:
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"".join(lines) + torn)
    return path


def _folded(lines: List[bytes]) -> Snapshot:
    snap, end = Snapshot(), 0
    for line in lines:
        end += len(line)
        snap.apply(parse_line(line[:-1]), end)
        snap.mark_end(line)
    return snap


def test_apply_folds_steps_approvals_and_system_records(chain_lines: ChainLines) -> None:
    lines = chain_lines(STORY)
    snap = _folded(lines)
    assert snap.seq == 5 and snap.offset == len(b"".join(lines)) and snap.hash == parse_line(lines[-1][:-1])["hash"]
    assert snap.first_ts == "2026-01-01T00:00:00Z"
    assert {k: v["status"] for k, v in snap.steps.items()} == {"a": "done", "b": "failed"}  # stop leaves b alone
    assert snap.steps["a"]["note"] == "built" and "step" not in snap.steps["a"]
    assert list(snap.approvals) == ["c"] and snap.approvals["c"]["seq"] == 4
    assert snap.last is not None and (snap.last["step"], snap.last["status"]) == ("c", "approved")  # not the stop
    assert snap.progress_seq == 4
    assert snap.sessions == {"s1": {"first": 1, "last": 2, "records": 2}, "s2": {"first": 3, "last": 5, "records": 3}}
    assert snap.sessions_total == 2


def test_sessions_kept_are_bounded_but_all_are_counted(chain_lines: ChainLines) -> None:
    count = KEEP_SESSIONS + 15
    snap = _folded(chain_lines(_rec("a", "running", session=f"s{i}") for i in range(count)))
    assert snap.sessions_total == count
    assert sorted(snap.sessions, key=lambda s: int(s[1:])) == [f"s{i}" for i in range(15, count)]


def test_to_bytes_and_back(chain_lines: ChainLines) -> None:
    snap = _folded(chain_lines(STORY))
    snap.problems = ["line 2: oops"]
    raw = snap.to_bytes()
    assert all(b < 128 for b in raw)
    assert Snapshot.from_bytes(raw) == snap


@pytest.mark.parametrize("raw", [
    b"", b"not json", b"[]", b'{"version": 999, "offset": 0}', b'{"offset": 0}',
    b'{"version": 1, "offset": 0, "surprise": 1}', b'{"version": 1, "steps": []}', b'{"version": 1, "offset": "0"}',
    "\u00e9".encode(),
])
def test_from_bytes_refuses_what_it_cannot_trust(raw: bytes) -> None:
    assert Snapshot.from_bytes(raw) is None


class Reads:
    """Wraps ``iter_lines`` in store.state.snapshot to record where each scan starts and how much it reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scans: List[Tuple[int, int]] = []  # (start offset, bytes yielded)
        real = ledger.iter_lines

        def counting(path: Path, start: int = 0) -> Iterator[Tuple[int, bytes, bool]]:
            scan = [start, 0]
            self.scans.append((start, 0))
            for item in real(path, start):
                scan[1] += len(item[1]) + item[2]
                self.scans[-1] = (scan[0], scan[1])
                yield item

        monkeypatch.setattr(snapshot, "iter_lines", counting)


def test_load_rebuilds_when_there_is_no_snapshot(tmp_path: Path, chain_lines: ChainLines) -> None:
    lines = chain_lines(STORY)
    loaded = snapshot.load(tmp_path / "state.json", _ledger(tmp_path, lines))
    assert loaded.changed and loaded.torn == 0
    assert loaded.snapshot == _folded(lines)


def test_load_of_an_up_to_date_snapshot_does_not_read_the_ledger(
        tmp_path: Path, chain_lines: ChainLines, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = chain_lines(STORY)
    ledger, state = _ledger(tmp_path, lines), tmp_path / "state.json"
    state.write_bytes(_folded(lines).to_bytes())
    reads = Reads(monkeypatch)
    loaded = snapshot.load(state, ledger)
    assert (loaded.changed, loaded.torn, reads.scans) == (False, 0, [])
    assert loaded.snapshot == _folded(lines)


def test_load_catches_up_reading_only_the_new_lines(
        tmp_path: Path, chain_lines: ChainLines, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = chain_lines(STORY + [_rec("b", "running", session="s3", attempt=2), _rec("b", "done", attempt=2)])
    old = lines[:5]
    ledger, state = _ledger(tmp_path, lines), tmp_path / "state.json"
    state.write_bytes(_folded(old).to_bytes())
    reads = Reads(monkeypatch)
    loaded = snapshot.load(state, ledger)
    start = len(b"".join(old))
    assert reads.scans == [(start, len(b"".join(lines[5:])))]
    assert loaded.changed and loaded.snapshot == _folded(lines)
    assert loaded.snapshot.steps["b"]["status"] == "done" and loaded.snapshot.sessions_total == 3


def test_load_reports_a_torn_tail_and_stops_before_it(tmp_path: Path, chain_lines: ChainLines) -> None:
    lines = chain_lines(STORY)
    state = tmp_path / "state.json"
    state.write_bytes(_folded(lines[:3]).to_bytes())
    loaded = snapshot.load(state, _ledger(tmp_path, lines, torn=b'{"seq":6,"ts":"2'))
    assert loaded.torn == len(b'{"seq":6,"ts":"2')
    assert loaded.snapshot == _folded(lines)
    state.write_bytes(loaded.snapshot.to_bytes())
    again = snapshot.load(state, tmp_path / "steps.jsonl")  # saved before the torn bytes: still torn
    assert (again.torn, again.changed) == (len(b'{"seq":6,"ts":"2'), False)


@pytest.mark.parametrize("how", ["shorter ledger", "different longer ledger", "garbage snapshot"])
def test_load_rebuilds_when_the_snapshot_does_not_match(tmp_path: Path, chain_lines: ChainLines, how: str) -> None:
    ours = chain_lines(STORY)
    theirs = chain_lines([_rec("x", "done", note="other job")] * (2 if how == "shorter ledger" else 9))
    state = tmp_path / "state.json"
    state.write_bytes(b"{" if how == "garbage snapshot" else _folded(ours).to_bytes())
    loaded = snapshot.load(state, _ledger(tmp_path, theirs))
    assert loaded.changed
    assert loaded.snapshot == _folded(theirs)
    assert list(loaded.snapshot.steps) == ["x"]


def test_rebuild_notes_damaged_lines_and_keeps_going(tmp_path: Path, chain_lines: ChainLines) -> None:
    lines = chain_lines(STORY)
    lines[1] = b"{this is not a record}\n"
    loaded = snapshot.rebuild(_ledger(tmp_path, lines))
    snap = loaded.snapshot
    assert [p.split(":")[0] for p in snap.problems] == ["line 2", "line 3"]
    assert "not valid JSON" in snap.problems[0] and "chain broken" in snap.problems[1]
    assert snap.seq == 5 and snap.offset == len(b"".join(lines))
    assert snap.steps["a"]["status"] == "running"  # the damaged "a done" line is not applied


def test_empty_or_missing_ledger_gives_an_empty_snapshot(tmp_path: Path) -> None:
    loaded = snapshot.load(tmp_path / "state.json", tmp_path / "steps.jsonl")
    assert loaded.snapshot == Snapshot() and loaded.torn == 0
    assert loaded.snapshot.hash == GENESIS


def test_session_records_add_their_cost_and_leave_steps_and_last_alone(chain_lines: ChainLines) -> None:
    sessions = [dict(_rec("a", "session", session="s3"), ended="completed", cost_usd=0.25),
                dict(_rec("a", "session", session="s4"), ended="api_error", cost_usd=0.5),
                dict(_rec("a", "session", session="s4"), ended="crashed"),  # no cost reported
                dict(_rec("a", "session"), cost_usd="1.0"), dict(_rec("a", "session"), cost_usd=True),
                dict(_rec("a", "session"), cost_usd=-2.0), dict(_rec("a", "stop"), cost_usd=9.0)]
    snap = _folded(chain_lines(STORY + sessions))
    assert snap.session_cost_usd == 0.75
    assert {k: v["status"] for k, v in snap.steps.items()} == {"a": "done", "b": "failed"}
    assert snap.last is not None and snap.last["status"] == "approved" and snap.progress_seq == 4
    assert snap.sessions["s4"]["records"] == 2
    assert Snapshot.from_bytes(snap.to_bytes()) == snap
def test_every_saved_field_has_a_check() -> None:
    # a field added to Snapshot without a check in CHECKS would make every saved snapshot unloadable
    assert set(snapshot.CHECKS) == set(Snapshot.__slots__)


@pytest.mark.parametrize("field, value", [
    ("offset", -1), ("offset", "0"), ("seq", 1.5), ("hash", 7), ("first_ts", None), ("steps", []),
    ("steps", {"a": "done"}), ("steps", {"a": {"status": 1}}), ("last", "x"), ("sessions", {"s": {"first": 1}}),
    ("sessions_total", -2), ("approvals", {"a": 1}), ("problems", ["ok", 3]), ("progress_seq", None),
    ("end_mark", "xyz1"), ("end_mark", "abc"), ("end_mark", "ab" * 65), ("first_hash", 3), ("once_open", []),
    ("once_open", {"k": "x"}), ("once_recent", [1]), ("once_results", -1), ("once_pending", {"d": [1]}),
    ("once_pending", {"d": [1, -3]}), ("session_cost_usd", "1"), ("session_cost_usd", -1.0),
    ("session_cost_usd", True),
])
def test_from_bytes_refuses_a_field_of_the_wrong_type(chain_lines: ChainLines, field: str, value: Any) -> None:
    good = _folded(chain_lines(STORY))
    data = {"version": snapshot.VERSION, **{k: getattr(good, k) for k in Snapshot.__slots__}, field: value}
    assert Snapshot.from_bytes(json.dumps(data).encode()) is None
    assert Snapshot.from_bytes(good.to_bytes()) == good


def test_a_merged_record_does_not_replace_a_later_record_of_the_same_step(chain_lines: ChainLines) -> None:
    later = {**_rec("a", "failed", "ours"), "ts": "2026-01-02T00:00:00Z"}
    older = {**_rec("a", "done", "theirs"), "merged": {"seq": 2, "prev": "p" * 32, "hash": "h" * 32}}
    newer = {**_rec("b", "done", "theirs"), "ts": "2026-01-03T00:00:00Z", "merged": {"seq": 3, "hash": "i" * 32}}
    snap = _folded(chain_lines([later, older, newer]))
    assert snap.steps["a"]["note"] == "ours" and snap.steps["b"]["note"] == "theirs"
    assert snap.seq == 3 and snap.sessions == {}
    plain = _folded(chain_lines([later, {k: v for k, v in older.items() if k != "merged"}]))
    assert plain.steps["a"]["note"] == "theirs"  # without `merged` the ledger's order decides


def test_a_saved_snapshot_must_match_the_ledgers_bytes_at_its_offset(tmp_path: Path, chain_lines: ChainLines) -> None:
    ours = b"".join(chain_lines([_rec("a", "done", "one")]))
    theirs = b"".join(chain_lines([_rec("a", "done", "two")]))
    assert len(ours) == len(theirs)
    ledger_path, state = _ledger(tmp_path, [ours]), tmp_path / "state.json"
    state.write_bytes(snapshot.rebuild(ledger_path).snapshot.to_bytes())
    assert snapshot.read_saved(state, ledger_path) is not None
    ledger_path.write_bytes(theirs)
    assert snapshot.read_saved(state, ledger_path) is None
    assert snapshot.load(state, ledger_path).snapshot.steps["a"]["note"] == "two"
