"""Who holds which step of a parallel plan, read from a ledger with no snapshot, exactly.

A fresh clone of a long parallel job has no ``state.json``; the quick read
(``store.state.quickread``) finds each plan step's latest record from the ledger's end, and this
module adds the claims, so that a parallel plan's cold hooks cost what a sequential plan's do.

What must be read to be exact. ``claims.fold`` changes the claims only on ``claim``, ``release``,
``done`` and ``skipped`` records (``Snapshot.apply`` adds nothing for records that are not merged),
and each step's entry moves on its own: a record on step S changes S's entry, and a claim by
worker W on another step can only mark S's entry ``released`` when W holds S. Reading backwards:

* a step whose latest such record is ``done`` or ``skipped`` is not held, whatever came before;
* a step whose latest such record is a ``release`` or a ``claim`` by W keeps an entry: W and that
  claim's time, ``released`` at W's first claim after it (each worker's latest claim is the only
  one that can still hold; a claim silently gives back the same worker's other step), and
  ``after``, the holder before it, which depends on that step's records back to its last
  ``done``/``skipped`` (or the ledger's start) and on the claims of those holders in between;
* leases are not in the ledger: they are judged from heartbeat files (and, where there is none,
  from the claim's ledger time, which the entry keeps), so nothing more is needed for them.

So a step's entry is settled, reading backwards, once the bytes read hold either a ``done`` or
``skipped`` of it (its entry before that no longer matters), or two of its claims R1 then R2 where
R2 is by another worker or R1 was given back before R2 (by a release of it by R1's worker, or by a
claim of R1's worker on another step): R2's ``after`` then names R1's worker, time and release,
never what came before R1. A step with neither needs the ledger's start (its first claim; or no
record at all). When every plan step is settled the scan stops and folds, oldest first and from an
empty state, only the records it read, with the same ``claims.fold`` the full replay uses: for a
settled step that gives the full replay's entry exactly. Entries of steps the plan no longer has
are then left out (they would not be exact); a scan that reaches the start keeps them.

It reads only those records: one regular expression over baton's own line form
(``,"status":"claim"`` ...) scanned backwards over the bytes in large chunks, each match decoded
(its own hash checked); a matched line that is not a record (a damaged line) is skipped, as the
full replay skips it. In a long job most steps end (``done``) near the ledger's end, so the scan
usually stops within the last few thousand records; a step held since the job began, or never
recorded, costs a regex scan of the whole file, decoding only the claim-relevant lines. The answer
equals the full replay's when:

* the lines are in baton's own form (what ``record``, ``claim`` and ``merge`` write; the quick
  read for steps makes the same assumption);
* no claim-relevant record read came from ``baton merge`` (``merged``): those are ordered by time,
  not by place, and an end merged in is judged against the step's latest record, so a merged record
  makes :func:`read` answer ``None`` and the caller replays the whole ledger;
* the scan finished inside its time budget; otherwise :func:`read` answers ``None`` too.

``tests/state/test_coldclaims.py`` checks this against the full replay over random ledgers.
"""

from __future__ import annotations

import os
import re
import time

from store.ledger.ledger import LedgerError, complete_end, parse_line
from store.state import claims

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

CHUNK = 4 << 20  # bytes scanned per regex pass; the deadline is checked between chunks
RELEVANT = re.compile(b'[,{]"status":"(?:claim|release|done|skipped)"')


class Settling:
    """The records read so far, newest first, and which plan steps they settle."""

    def __init__(self, steps: Iterable[str]) -> None:
        self.plan: FrozenSet[str] = frozenset(steps)
        self.pending: Set[str] = set(steps)
        self.stopped = False  # every plan step settled: the scan stopped before the start
        self.records: List[Dict[str, Any]] = []
        self.later: Dict[str, Dict[str, Any]] = {}  # step -> its oldest claim read so far
        self.given_back: Dict[str, Set[str]] = {}  # step -> workers that released it since that claim
        self.claims_of: Dict[str, List[Tuple[int, str]]] = {}  # worker -> (seq, step) of its claims read

    def offer(self, record: Dict[str, Any]) -> None:
        """Take the next record back (an older one than any offered before)."""
        self.records.append(record)
        step, status, worker = str(record.get("step", "")), record.get("status"), str(record.get("worker") or "")
        if status == claims.CLAIM:
            self.claims_of.setdefault(worker, []).append((int(record["seq"]), step))
        if step not in self.pending:
            return
        self._settle(step, status, worker, record)
        self.stopped = not self.pending

    def _settle(self, step: str, status: Any, worker: str, record: Dict[str, Any]) -> None:
        if status in claims.ENDS:
            self.pending.discard(step)
        elif status == claims.RELEASE:
            self.given_back.setdefault(step, set()).add(worker)
        elif status == claims.CLAIM:
            later = self.later.get(step)
            if later is not None and (later.get("worker") != worker or self._released(record, later)):
                self.pending.discard(step)
            self.later[step], self.given_back[step] = record, set()

    def _released(self, first: Dict[str, Any], second: Dict[str, Any]) -> bool:
        """Whether the claim ``first`` was given back before the same step's next claim ``second``."""
        worker, step = str(first.get("worker") or ""), str(first.get("step", ""))
        if worker in self.given_back.get(step, ()):
            return True
        low, high = int(first["seq"]), int(second["seq"])
        return any(low < seq < high and other != step for seq, other in self.claims_of.get(worker, ()))

    def fold(self, base: Dict[str, Dict[str, Any]], whole: bool) -> Dict[str, Dict[str, Any]]:
        """The claims: ``base`` (the claims where the scan stopped, when it reached ``start``) with
        the records read folded in, oldest first; only the plan's steps unless ``whole``."""
        held = {step: dict(entry) for step, entry in base.items()} if whole else {}
        for record in reversed(self.records):
            claims.fold(held, record)
        return held if whole else {step: entry for step, entry in held.items() if step in self.plan}


def read(fd: int, start: int, end: int, base: Dict[str, Dict[str, Any]], steps: Sequence[str],
         deadline: float) -> Optional[Dict[str, Dict[str, Any]]]:
    """The claims after the complete lines in ``[start, end)`` of the open ledger ``fd`` (``start``
    a line start, ``end`` just after a newline), ``base`` being the claims at ``start``, exact for
    the plan's ``steps``; ``None`` when that answer would not be exact (see the module docstring)."""
    settling = Settling(steps)
    high = end
    while high > start and not settling.stopped:
        if time.monotonic() >= deadline:
            return None
        low = max(start, high - CHUNK)
        data = os.pread(fd, high - low, low)
        cut = 0 if low == start else data.find(b"\n") + 1  # the first piece may begin mid-line
        if cut == 0 and low > start:  # one line longer than a chunk: take it whole
            low = complete_end(fd, low, start)  # back to the start of the line ``low`` falls in
            data, cut = os.pread(fd, high - low, low), 0
        if not _offer_chunk(data, cut, settling):
            return None
        high = low + cut
    return settling.fold(base, whole=not settling.stopped)


def _offer_chunk(data: bytes, cut: int, settling: Settling) -> bool:
    """Offer the relevant records of ``data[cut:]`` (whole lines) newest first; False at a merged one."""
    before = len(data) + 1  # start of the last line decoded: a line holding two matches is read once
    for match in reversed(list(RELEVANT.finditer(data, cut))):
        if match.start() >= before:
            continue
        low = data.rfind(b"\n", cut, match.start()) + 1 or cut
        high = data.find(b"\n", match.end())
        before = low
        try:
            record = parse_line(data[low:high])
        except LedgerError:
            continue  # a damaged line: the full replay skips it too
        if record.get("status") not in claims.SYSTEM + claims.ENDS:
            continue  # the words were inside another field
        if "merged" in record:
            return False
        settling.offer(record)
        if settling.stopped:
            return True
    return True
