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
from store.ledger.ledger import GENESIS, LedgerError, format_line, iter_lines, parse_line, seal

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
                                               Set[str], List[Tuple[bytes, Dict[str, Any]]]]:
    """(shared records, the last shared record, ours' last record, the origins of ours' own
    records, theirs' own lines and records). Only theirs' own records are held in memory."""
    mine, other = _records(ours, "our ledger"), _records(theirs, "their ledger")
    shared, met, last = 0, None, None
    seen: Set[str] = set()
    rest: List[Tuple[bytes, Dict[str, Any]]] = []
    for raw_a, a in mine:
        last = a
        pair = next(other, None)
        if pair is not None and pair[0] == raw_a and not seen:
            shared, met = shared + 1, a
            continue
        seen.add(_origin(a)["hash"])
        if pair is not None:
            rest.append(pair)
    rest += list(other)
    return shared, met, last, seen, rest


def rechained(theirs: List[Dict[str, Any]], seen: Set[str], last: Optional[Dict[str, Any]], shared: int,
              met_hash: str, now: str) -> List[bytes]:
    """The lines to append after ``last``: a ``merge`` record, then each record of ``theirs`` whose
    origin is not in ``seen``, re-chained. Empty when there is nothing new."""
    fresh = [r for r in theirs if _origin(r)["hash"] not in seen]
    if not fresh:
        return []
    seq, prev = (last["seq"], last["hash"]) if last else (0, GENESIS)
    note = (f"merged {len(fresh)} record(s) of another branch; the branches met after record #{shared}"
            if shared else f"merged {len(fresh)} record(s) of another branch; they share no record")
    header = seal({"ts": now, "step": "", "status": "merge", "note": note, "session": "",
                   "met": {"seq": shared, "hash": met_hash}}, seq + 1, prev)
    lines = [format_line(header)]
    seq, prev = header["seq"], header["hash"]
    for record in fresh:
        fields = {k: v for k, v in record.items() if k not in ("seq", "prev", "hash", "merged")}
        copy = seal({**fields, "merged": _origin(record)}, seq + 1, prev)
        lines.append(format_line(copy))
        seq, prev = copy["seq"], copy["hash"]
    return lines


def origins(records: List[Dict[str, Any]]) -> Set[str]:
    return {_origin(r)["hash"] for r in records}


def merge(ours: Path, theirs: Path, now: str) -> Merged:
    """Append theirs' own records to ``ours`` (see the module's doc); ``ours`` is changed in place."""
    shared, met, last, seen, rest = _split(ours, theirs)
    if not seen and last is met:  # ours is theirs' start: theirs' own lines follow as they are
        lines = [raw + b"\n" for raw, _ in rest]
        added = len(lines)
    else:
        lines = rechained([r for _, r in rest], seen, last, shared, met["hash"] if met else GENESIS, now)
        added = max(len(lines) - 1, 0)
    if lines:
        with open(ours, "ab") as handle:
            handle.write(b"".join(lines))
            handle.flush()
            os.fsync(handle.fileno())
    return Merged(shared, last["seq"] if last else 0, added, len(rest) - added)
