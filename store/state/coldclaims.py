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

So the exact answer needs every claim/release/done/skipped record back to the start for a step
still held or released and never ended before, which in a long job is most of the file. Instead
of decoding every line (what the full replay costs) this reads only those records: one regular
expression over baton's own line form (``,"status":"claim"`` ...) scanned over the bytes in large
chunks, each match decoded (its own hash checked) and folded in order by the same ``claims.fold``
the full replay uses. A matched line that is not a record (a damaged line) is skipped, as the
full replay skips it. The result equals the full replay's claims when:

* the lines are in baton's own form (what ``record``, ``claim`` and ``merge`` write; the quick
  read for steps makes the same assumption);
* no claim-relevant record came from ``baton merge`` (``merged``): those are ordered by time, not
  by place, and an end merged in is judged against the step's latest record, so a merged record
  makes :func:`read` answer ``None`` and the caller replays the whole ledger;
* the scan finished inside its time budget; otherwise :func:`read` answers ``None`` too.

``tests/state/test_coldclaims.py`` checks this against the full replay over random ledgers.
"""

from __future__ import annotations

import os
import re
import time

from store.ledger.ledger import LedgerError, parse_line
from store.state import claims

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

CHUNK = 8 << 20  # bytes scanned per regex pass; the deadline is checked between chunks
RELEVANT = re.compile(b'[,{]"status":"(?:claim|release|done|skipped)"')


def read(fd: int, start: int, end: int, base: Dict[str, Dict[str, Any]],
         deadline: float) -> Optional[Dict[str, Dict[str, Any]]]:
    """The claims after the complete lines in ``[start, end)`` of the open ledger ``fd`` (``start``
    a line start, ``end`` just after a newline) folded onto ``base`` (the claims at ``start``), or
    ``None`` when that answer would not be exact (see the module docstring)."""
    held: Dict[str, Dict[str, Any]] = {step: dict(entry) for step, entry in base.items()}
    pos = start
    while pos < end:
        if time.monotonic() >= deadline:
            return None
        data = os.pread(fd, min(CHUNK, end - pos), pos)
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # one line longer than a chunk: read it whole
            cut = len(data) + os.pread(fd, end - pos - len(data), pos + len(data)).find(b"\n") + 1
            data = os.pread(fd, cut, pos)
        if not _fold_chunk(data[:cut] if cut < len(data) else data, held):
            return None
        pos += cut
    return held


def _fold_chunk(data: bytes, held: Dict[str, Dict[str, Any]]) -> bool:
    """Fold the relevant records of ``data`` (whole lines) in order; False at a merged one."""
    after = -1  # end of the last line decoded: a line holding two matches is folded once
    for match in RELEVANT.finditer(data):
        if match.start() < after:
            continue
        low = data.rfind(b"\n", 0, match.start()) + 1
        high = data.find(b"\n", match.end())
        after = high
        try:
            record = parse_line(data[low:high])
        except LedgerError:
            continue  # a damaged line: the full replay skips it too
        if record.get("status") not in claims.SYSTEM + claims.ENDS:
            continue  # the words were inside another field
        if "merged" in record:
            return False
        claims.fold(held, record)
    return True
