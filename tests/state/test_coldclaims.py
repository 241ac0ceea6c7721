"""The cold claims of a parallel plan (no snapshot: a fresh clone) equal the full replay's, on random
ledgers of claims, releases, step records and damaged lines by several workers; a merged record
or a spent budget makes the cold read decline (the caller then replays the whole ledger)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from store.ledger.ledger import GENESIS, format_line, seal
from store.state import coldclaims, quickread, snapshot

STEPS = ["a", "b c", 'q"uote']  # the plan's
GONE = "gone"  # a step the plan no longer has: its claims are exact only when the scan reaches the start
WORKERS = ["w1", "w2", "w3"]
STATUSES = ["claim", "claim", "claim", "release", "running", "done", "failed", "skipped", "stop"]
# a note holding the words the scan looks for: the line must be decoded and judged by its status
DECOY = ',"status":"claim"'

Entry = Tuple[str, str, str, bool]  # step, status, worker, decoy note


def _write(path: Path, entries: List[Entry], damaged: Optional[int] = None,
           merged: Optional[int] = None) -> None:
    lines, prev = [], GENESIS
    for seq, (step, status, worker, decoy) in enumerate(entries, start=1):
        fields: Dict[str, Any] = {"ts": f"2026-01-01T{seq // 3600:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}Z",
                                  "step": step, "status": status, "note": DECOY if decoy else f"n{seq}",
                                  "session": f"s-{worker}"}
        if status in ("claim", "release"):
            fields["worker"] = worker
        if seq == merged:
            fields["merged"] = "other"
        record = seal(fields, seq, prev)
        line = format_line(record)
        if seq == damaged:
            line = line.replace(b'"ts"', b'"tz"', 1)  # its hash no longer matches: the replay skips it
        lines.append(line)
        prev = record["hash"]
    path.write_bytes(b"".join(lines))


def _plan(held: Optional[Dict[str, Dict[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    assert held is not None
    return {step: entry for step, entry in held.items() if step in STEPS}


def _cold(path: Path, start: int = 0, base: Optional[Dict[str, Dict[str, Any]]] = None,
          budget: float = 60.0) -> Optional[Dict[str, Dict[str, Any]]]:
    fd = os.open(str(path), os.O_RDONLY)
    try:
        return coldclaims.read(fd, start, os.fstat(fd).st_size, base or {}, STEPS, time.monotonic() + budget)
    finally:
        os.close(fd)


ENTRIES = st.lists(st.tuples(st.sampled_from(STEPS + [GONE]), st.sampled_from(STATUSES), st.sampled_from(WORKERS),
                             st.booleans()), max_size=60)


ONE_STEP = st.lists(st.tuples(st.just("a"), st.sampled_from(STATUSES), st.sampled_from(WORKERS), st.booleans()),
                   max_size=25)
ENDED = [("b c", "done", "w1", False), ('q"uote', "skipped", "w2", False)]


@settings(max_examples=500, deadline=None)
@given(ENTRIES, st.integers(min_value=0, max_value=70))
def test_cold_claims_equal_the_full_replay(tmp_path_factory: Any, entries: List[Entry], damaged: int) -> None:
    path = tmp_path_factory.mktemp("cold") / "steps.jsonl"
    _write(path, entries, damaged=damaged)
    assert _plan(_cold(path)) == _plan(snapshot.rebuild(path).snapshot.claims)


@settings(max_examples=500, deadline=None)
@given(ENTRIES, ONE_STEP)
def test_cold_claims_equal_the_full_replay_when_the_scan_stops_early(tmp_path_factory: Any, entries: List[Entry],
                                                                     last: List[Entry]) -> None:
    """The other plan steps end near the end, so the scan stops as soon as step a is settled."""
    path = tmp_path_factory.mktemp("cold") / "steps.jsonl"
    _write(path, entries + ENDED + last)
    assert _plan(_cold(path)) == _plan(snapshot.rebuild(path).snapshot.claims)


@settings(max_examples=150, deadline=None)
@given(ENTRIES, ENTRIES)
def test_cold_claims_from_a_saved_snapshot_equal_the_full_replay(tmp_path_factory: Any, first: List[Entry],
                                                                 then: List[Entry]) -> None:
    """From a snapshot that matches the ledger's first part, only the rest is scanned."""
    folder = tmp_path_factory.mktemp("cold")
    path = folder / "steps.jsonl"
    _write(path, first)
    base = snapshot.rebuild(path).snapshot
    _write(path, first + then)
    assert _plan(_cold(path, base.offset, base.claims)) == _plan(snapshot.rebuild(path).snapshot.claims)


@settings(max_examples=100, deadline=None)
@given(ENTRIES)
def test_the_quick_read_of_a_parallel_plan_holds_the_exact_claims(tmp_path_factory: Any,
                                                                  entries: List[Entry]) -> None:
    path = tmp_path_factory.mktemp("cold") / "steps.jsonl"
    _write(path, entries)
    full = snapshot.rebuild(path).snapshot
    quick = quickread.read(path, STEPS, (), None, 60.0, with_claims=True)
    assert quick is not None
    assert _plan(quick.snapshot.claims) == _plan(full.claims)
    assert {s: quick.snapshot.steps.get(s, {}).get("status") for s in STEPS} == \
        {s: full.steps.get(s, {}).get("status") for s in STEPS}


def test_a_merged_claim_makes_the_cold_read_decline(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    entries: List[Entry] = [("a", "claim", "w1", False), ("b c", "claim", "w2", False), ("a", "done", "w1", False)]
    _write(path, entries, merged=2)
    assert _cold(path) is None
    assert quickread.read(path, STEPS, (), None, 60.0, with_claims=True) is None
    _write(path, entries)
    assert _cold(path) == {"b c": snapshot.rebuild(path).snapshot.claims["b c"]}


def test_a_spent_budget_makes_the_cold_read_decline(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    _write(path, [("a", "claim", "w1", False)])
    assert _cold(path, budget=-1.0) is None


def test_the_scan_stops_once_every_plan_step_is_settled(tmp_path: Path) -> None:
    """Older records are not read: the claim of a step the plan no longer has is not seen."""
    path = tmp_path / "steps.jsonl"
    entries: List[Entry] = [(GONE, "claim", "w1", False)] * 50 + [
        ("a", "done", "w1", False), ("b c", "claim", "w1", False), ("b c", "claim", "w2", False),
        ('q"uote', "skipped", "w3", False), ("a", "claim", "w3", False)]
    _write(path, entries)
    full = snapshot.rebuild(path).snapshot.claims
    cold = _cold(path)
    assert cold == _plan(full) and GONE in full and GONE not in (cold or {})


def test_a_claim_renewed_by_its_holder_keeps_the_holder_before(tmp_path: Path) -> None:
    """w1 claims a step w2 held, then claims it again without giving it back: the second claim's
    ``after`` is still w2, so the scan must read back past the first."""
    path = tmp_path / "steps.jsonl"
    _write(path, [("a", "claim", "w2", False), ("a", "claim", "w1", False), ("b c", "done", "w3", False),
                  ('q"uote', "done", "w3", False), ("a", "claim", "w1", False)])
    cold = _cold(path)
    assert cold == _plan(snapshot.rebuild(path).snapshot.claims)
    assert (cold or {})["a"]["after"]["worker"] == "w2"
