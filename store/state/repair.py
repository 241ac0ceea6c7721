"""What `baton repair` does: move the bad lines off the ledger's end so records can be appended again.

Complete lines at the end that are not records (git conflict markers, a line of NUL bytes, a
10 MB line), and any torn tail after them, are copied byte for byte to
``.baton/quarantine/<time>-at-<offset>.bytes`` (fsynced), the ledger is cut back to its last valid
record, and a ``quarantine`` record chained onto that record says what was removed, from where,
and where it is kept. A torn tail alone is repaired as an append repairs it. Bad lines followed by
valid records are left alone (cutting them would cut the records after them); ``baton verify``
names them.
"""

from __future__ import annotations

import os

from store.base import durable
from store.base.errors import BatonError, describe
from store.base.values import Frozen
from store.state import journal
from store.state.ledger import LedgerError, complete_end, lines_backwards, parse_line
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple


class Repaired(Frozen):
    """What a repair did: bad lines moved (count, bytes, from which offset, to which file), torn
    bytes handled, the quarantine record, and warnings."""

    __slots__ = ("lines", "size", "offset", "kept_in", "torn", "record", "warnings")

    def __init__(self, lines: int, size: int, offset: int, kept_in: str, torn: int,
                 record: Optional[Dict[str, Any]], warnings: Sequence[str]) -> None:
        self.lines, self.size, self.offset, self.kept_in, self.torn = lines, size, offset, kept_in, torn
        self.record, self.warnings = record, tuple(warnings)


def _bad_end(fd: int, size: int) -> Tuple[int, int, int]:
    """(where the bad lines at the end start, how many there are, where a torn tail starts)."""
    end = complete_end(fd, size)
    cut, bad = end, 0
    for at, raw in lines_backwards(fd, 0, end):
        try:
            parse_line(raw)
        except LedgerError:
            cut, bad = at, bad + 1
            continue
        break
    return cut, bad, end


def _keep(layout: Layout, data: bytes, offset: int) -> str:
    """Write ``data`` to a new quarantine file, durably; return its path relative to the project."""
    folder = layout.quarantine
    folder.mkdir(exist_ok=True)
    stamp = journal.now_iso().replace(":", "-")
    path = folder / f"{stamp}-at-{offset}.bytes"
    number = 1
    while path.exists():
        number += 1
        path = folder / f"{stamp}-at-{offset}-{number}.bytes"
    durable.atomic_write(path, data)
    return os.path.relpath(path, layout.project)


def repair(layout: Layout, steps: Optional[Sequence[str]] = None) -> Repaired:
    """Quarantine the bad lines at the ledger's end (see the module's doc); nothing to do is fine."""
    warnings: List[str] = []
    try:
        with durable.locked(layout.lock):
            try:
                fd = os.open(str(layout.ledger), os.O_RDONLY)
            except FileNotFoundError:
                return Repaired(0, 0, 0, "", 0, None, ())
            try:
                size = os.fstat(fd).st_size
                cut, bad, end = _bad_end(fd, size)
                data = os.pread(fd, size - cut, cut) if bad else b""
            finally:
                os.close(fd)
            if not bad:
                journal.repair_tail(layout, warnings)
                return Repaired(0, 0, end, "", size - end, None, warnings)
            kept_in = _keep(layout, data, cut)
            os.truncate(layout.ledger, cut)
    except OSError as exc:
        raise BatonError(f"cannot repair: {describe(exc)}; nothing was changed") from None
    from hashlib import sha256

    removed = {"offset": cut, "bytes": len(data), "lines": bad, "torn_bytes": size - end,
               "sha256": sha256(data).hexdigest(), "kept_in": kept_in}
    note = f"moved {bad} bad line(s) ({len(data)} bytes) from byte {cut} of steps.jsonl to {kept_in}"
    done = journal.commit(layout, "", "quarantine", note, {"removed": removed}, steps=steps)
    return Repaired(bad, len(data), cut, kept_in, size - end, done.record, [*warnings, *done.warnings])
