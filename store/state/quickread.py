"""A snapshot of the plan's steps read from the ledger's end, for a reader that cannot wait for a rebuild.

It decodes the last lines backwards until every wanted step has its latest record, then looks for
the steps still missing in the bytes before them with one regular expression over baton's own
line form (``,"step":"ID","status":"...``), scanned backwards in chunks within a time budget.
The result is exact for the steps it resolved, for LAST and for the chain's end; totals
(sessions seen, damaged lines) are not, so it is marked partial and never saved: the full
snapshot is rebuilt outside the caller's critical path (``store.state.background``).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from store.base import jsonc
from store.ledger.ledger import LedgerError, check_link, complete_end, lines_backwards, parse_line
from store.state import coldclaims
from store.state.snapshot import STEP_STATUSES, Loaded, Snapshot, key_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

TAIL_BYTES = 1 << 17  # decoded backwards before searching: a few hundred records
MIN_TAIL = 50  # records decoded at least, for LAST and recent sessions
READ_CHUNK = 1 << 16  # for the few lines found by the search
SEARCH_CHUNK = 4 << 20  # the deadline is checked between chunks
KINDS = STEP_STATUSES + ("approved",)


class Wanted:
    """What is still missing: the latest step record of each id in ``steps``, the latest approval
    of each id in ``approvals``, and the latest record of any step (for LAST)."""

    def __init__(self, steps: Iterable[str], approvals: Iterable[str]) -> None:
        self.steps: Set[str] = set(steps)
        self.approvals: Set[str] = set(approvals)
        self.progress = True  # the latest step or approval record, whatever its step
        self.found: Dict[int, Dict[str, Any]] = {}  # seq -> record

    def __bool__(self) -> bool:
        return bool(self.steps or self.approvals or self.progress)

    def offer(self, record: Dict[str, Any]) -> bool:
        """Keep ``record`` when it is the latest one of a wanted kind (records come newest first)."""
        step, status = record.get("step"), record.get("status")
        kept = self.progress and status in KINDS
        self.progress = self.progress and not kept
        if status == "approved" and step in self.approvals:
            self.approvals.discard(step)
            kept = True
        elif status in STEP_STATUSES and step in self.steps:
            self.steps.discard(step)
            kept = True
        if kept:
            self.found[record["seq"]] = record
        return kept

    def pattern(self) -> Tuple[Optional[re.Pattern[bytes]], int]:
        """A regular expression for the wanted ids' records, and the longest match it can make."""
        ids = sorted(self.steps | self.approvals)
        if not ids:
            return None, 0
        encoded = [re.escape(jsonc.dumps(i).encode("ascii")) for i in ids]
        kinds = b"|".join(k.encode("ascii") for k in KINDS)
        longest = max(len(e) for e in encoded) + 40
        return re.compile(b',"step":(?:' + b"|".join(encoded) + b'),"status":"(?:' + kinds + b')"'), longest


def _tail(fd: int, start: int, end: int, wanted: Wanted, snap: Snapshot) -> Tuple[int, List[Dict[str, Any]]]:
    """Decode lines backwards from ``end`` until nothing is wanted (and at least MIN_TAIL records are
    read) or TAIL_BYTES are behind; return where the decoded part starts and its records, oldest first."""
    records: List[Dict[str, Any]] = []
    cut = end
    for at, raw in lines_backwards(fd, start, end):
        if cut < end and ((not wanted and len(records) >= MIN_TAIL) or end - at > TAIL_BYTES):
            break  # the last line is always decoded: a bad one must be seen
        cut = at
        try:
            record = parse_line(raw)
        except LedgerError as exc:
            snap.problems = (snap.problems + [f"byte {at}: {exc}"])[-5:]
            continue
        wanted.offer(record)
        records.append(record)
    records.reverse()
    return cut, records


def _line_around(fd: int, at: int, start: int, stop: int) -> bytes:
    """The whole line holding byte ``at`` (without its newline), within ``[start, stop)``."""
    low = at
    while low > start:
        piece_low = max(start, low - READ_CHUNK)
        found = os.pread(fd, low - piece_low, piece_low).rfind(b"\n")
        if found >= 0:
            low = piece_low + found + 1
            break
        low = piece_low
    high = at
    while high < stop:
        piece = os.pread(fd, min(READ_CHUNK, stop - high), high)
        found = piece.find(b"\n")
        if found >= 0 or not piece:
            high += max(found, 0)
            break
        high += len(piece)
    return os.pread(fd, high - low, low)


ANY_STEP = re.compile(b',"step":"(?:[^"\\\\]|\\\\.)*","status":"(?:' + "|".join(KINDS).encode("ascii") + b')"')


def _search_progress(fd: int, start: int, stop: int, wanted: Wanted, deadline: float) -> None:
    """Find the latest record of any step (LAST) before ``stop``, when the tail held none."""
    high = stop
    while high > start and wanted.progress and time.monotonic() < deadline:
        low = max(start, high - READ_CHUNK)
        data = os.pread(fd, min(stop, high + READ_CHUNK) - low, low)
        hits = [m.start() + low for m in ANY_STEP.finditer(data) if m.start() + low < high]
        for at in reversed(hits):
            try:
                if wanted.offer(parse_line(_line_around(fd, at, start, stop))) or not wanted.progress:
                    break
            except LedgerError:
                continue
        high = low


def _search(fd: int, start: int, stop: int, wanted: Wanted, deadline: float) -> bool:
    """Find the latest record of each wanted id in ``[start, stop)``, scanning backwards until the
    deadline; True when it got to ``start`` (an id still wanted then has no record at all). Only
    lines in baton's own form can match; each match is decoded and checked."""
    high = stop
    while high > start and (wanted.steps or wanted.approvals):
        if time.monotonic() >= deadline:
            return False
        pattern, overlap = wanted.pattern()
        if pattern is None:
            break
        low = max(start, high - SEARCH_CHUNK)
        data = os.pread(fd, min(stop, high + overlap) - low, low)
        hits = [m.start() + low for m in pattern.finditer(data) if m.start() + low < high]
        for at in reversed(hits):
            try:
                wanted.offer(parse_line(_line_around(fd, at, start, stop)))
            except LedgerError:
                continue  # a damaged line: the full rebuild notes it
        high = low
    return True


def _first(fd: int) -> Dict[str, Any]:
    """The ledger's first record ({} when unreadable): its time starts the job, its hash names it."""
    try:
        return parse_line(_line_around(fd, 0, 0, READ_CHUNK))
    except LedgerError:
        return {}


def read(ledger: Path, steps: Sequence[str], approvals: Sequence[str], base: Optional[Snapshot],
         budget: float, with_claims: bool = False) -> Optional[Loaded]:
    """A partial snapshot: ``base`` (a saved snapshot that matches the ledger, or ``None``) plus what
    the ledger after it says about ``steps`` and ``approvals``, found within ``budget`` seconds.
    ``with_claims`` (a parallel plan): the claims too, exactly (``store.state.coldclaims``), or
    ``None`` when they cannot be (the caller then replays the whole ledger)."""
    deadline = time.monotonic() + budget
    snap = (Snapshot.from_bytes(base.to_bytes()) if base is not None else None) or Snapshot()
    start = snap.offset
    wanted = Wanted(steps, approvals)
    fd = os.open(str(ledger), os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        end = complete_end(fd, size, start)
        held = coldclaims.read(fd, start, end, snap.claims, steps, deadline) if with_claims else snap.claims
        if held is None:
            return None
        tail_start, tail = _tail(fd, start, end, wanted, snap)
        _search_progress(fd, start, tail_start, wanted, deadline)
        searched = _search(fd, start, tail_start, wanted, deadline)
        if not (snap.first_ts and snap.first_hash) and end:
            first = _first(fd)
            snap.first_ts, snap.first_hash = str(first.get("ts", "")), str(first.get("hash", ""))
        last_line = os.pread(fd, min(end - start, 4096), end - min(end - start, 4096))
    finally:
        os.close(fd)
    first_tail_seq = tail[0]["seq"] if tail else None
    _fold(snap, [wanted.found[s] for s in sorted(wanted.found) if first_tail_seq is None or s < first_tail_seq],
          tail)
    if end > start:
        snap.offset = end
        snap.mark_end(last_line)
    if with_claims:
        snap.claims = held  # folding the found records moved claims as if nothing came between them
    missing = () if searched else sorted(wanted.steps | wanted.approvals)
    return Loaded(snap, size - end, False, partial=True, unresolved=missing)


def _fold(snap: Snapshot, older: List[Dict[str, Any]], tail: List[Dict[str, Any]]) -> None:
    """Apply the records found before the tail, then the tail itself, checking the tail's links."""
    for record in older:
        _apply(snap, record)
    prev: Optional[Dict[str, Any]] = None
    for record in tail:
        if prev is not None:
            try:
                check_link(record, prev)
            except LedgerError as exc:
                snap.problems = (snap.problems + [f"record {record['seq']}: {exc}"])[-5:]
        _apply(snap, record)
        prev = record


def _apply(snap: Snapshot, record: Dict[str, Any]) -> None:
    """Fold a record whose place in the ledger is not known here: what points into the ledger by
    offset (a checkpoint's record, a ``baton once`` key's latest record) is left out, and a reader
    that needs it reads the full state."""
    snap.apply(record, snap.offset, start=0)
    step = snap.steps.get(str(record.get("step", "")))
    if step is not None and step.get("seq") == record.get("seq"):
        step.pop("at", None)
    key = record.get("key")
    if isinstance(key, str):
        snap.once_pending.pop(key_digest(key), None)
