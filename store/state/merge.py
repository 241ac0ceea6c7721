"""Merging two branches' ledgers: what `baton merge` does, as the git merge driver ``baton init`` registers.

The two ledgers start with the same lines; after them each branch appended its own records. The
merge keeps ours byte for byte and appends theirs after it: first a ``merge`` record saying where
the histories met, then each record of theirs re-chained (new ``seq`` and ``prev``, hence a new
``hash``) and carrying ``merged``, the ``seq``, ``prev`` and ``hash`` it had on its branch. A
record already in ours (the same record, or merged before) is not copied twice. The snapshot
folds a merged record of a step only when it is later than the step's record it would replace,
so the job resumes from whichever branch did the step last.
"""

from __future__ import annotations

import os
from pathlib import Path

from store.base.errors import BatonError
from store.base.values import Frozen
from store.state.ledger import GENESIS, LedgerError, format_line, iter_lines, parse_line, seal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

DRIVER = "baton"


class Merged(Frozen):
    __slots__ = ("met", "ours", "added", "skipped")

    def __init__(self, met: int, ours: int, added: int, skipped: int) -> None:
        self.met = met  # records both ledgers share
        self.ours = ours  # records in ours before the merge
        self.added = added  # records of theirs appended (re-chained)
        self.skipped = skipped  # records of theirs already in ours


def _records(path: Path, name: str) -> Iterator[Tuple[bytes, Dict[str, Any]]]:
    for _, raw, complete in iter_lines(path):
        if not complete:
            raise BatonError(f"{name} ({path}) ends with a torn line; run `baton repair` on that branch first")
        try:
            yield raw, parse_line(raw)
        except LedgerError as exc:
            raise BatonError(f"{name} ({path}) holds a line that is not a record ({exc}); "
                             "run `baton verify` and `baton repair` on that branch first") from None


def _origin(record: Dict[str, Any]) -> Dict[str, Any]:
    """Where a record first came from: its ``merged`` field when it was merged before, else itself."""
    merged = record.get("merged")
    if isinstance(merged, dict) and isinstance(merged.get("hash"), str):
        return merged
    return {"seq": record["seq"], "prev": record["prev"], "hash": record["hash"]}


def _split(ours: Path, theirs: Path) -> Tuple[int, Optional[Dict[str, Any]], Optional[Dict[str, Any]],
                                               Set[str], List[Dict[str, Any]]]:
    """(shared records, the last shared record, ours' last record, the origins of ours' own
    records, theirs' own records). Only theirs' own records are held in memory."""
    mine, other = _records(ours, "our ledger"), _records(theirs, "their ledger")
    shared, met, last, seen = 0, None, None, set()
    pending: Optional[Dict[str, Any]] = None
    for (raw_a, a), pair in zip(mine, _with_end(other)):
        if pair is not None and pair[0] == raw_a:
            shared, met, last = shared + 1, a, a
            continue
        pending = pair[1] if pair is not None else None
        last = a
        seen.add(_origin(a)["hash"])
        break
    for _, a in mine:
        last = a
        seen.add(_origin(a)["hash"])
    rest = ([pending] if pending is not None else []) + [b for _, b in other]
    return shared, met, last, seen, rest


def _with_end(records: Iterator[Tuple[bytes, Dict[str, Any]]]) -> Iterator[Optional[Tuple[bytes, Dict[str, Any]]]]:
    yield from records
    while True:
        yield None


def merge(ours: Path, theirs: Path, now: str) -> Merged:
    """Append theirs' own records to ``ours`` (see the module's doc); ``ours`` is changed in place."""
    shared, met, last, seen, rest = _split(ours, theirs)
    if last is None:  # ours holds only shared records, or nothing: theirs' own lines follow as they are
        last = met
    fresh = [r for r in rest if _origin(r)["hash"] not in seen]
    if not fresh:
        return Merged(shared, last["seq"] if last else 0, 0, len(rest))
    seq, prev = (last["seq"], last["hash"]) if last else (0, GENESIS)
    note = (f"merged {len(fresh)} record(s) of another branch; the branches met after record #{shared}"
            if shared else f"merged {len(fresh)} record(s) of another branch; they share no record")
    lines = []
    header = seal({"ts": now, "step": "", "status": "merge", "note": note, "session": "",
                   "met": {"seq": shared, "hash": met["hash"] if met else GENESIS}}, seq + 1, prev)
    lines.append(format_line(header))
    seq, prev = header["seq"], header["hash"]
    for record in fresh:
        fields = {k: v for k, v in record.items() if k not in ("seq", "prev", "hash", "merged")}
        copy = seal({**fields, "merged": _origin(record)}, seq + 1, prev)
        lines.append(format_line(copy))
        seq, prev = copy["seq"], copy["hash"]
    with open(ours, "ab") as handle:
        handle.write(b"".join(lines))
        handle.flush()
        os.fsync(handle.fileno())
    return Merged(shared, last["seq"] if last else 0, len(fresh), len(rest) - len(fresh))
