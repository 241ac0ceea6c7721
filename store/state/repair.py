"""What `baton repair` does: move the bad lines off the ledger's end so records can be appended again.

Complete lines at the end that are not records (a line of NUL bytes, a 10 MB line, a hand edit),
and any torn tail after them, are copied byte for byte to ``.baton/quarantine/<time>-at-<offset>.bytes``
(fsynced), the ledger is cut back to its last valid record, and a ``quarantine`` record chained onto
that record says what was removed, from where, and where it is kept. A git conflict at the end
(``<<<<<<<`` ours ``=======`` theirs ``>>>>>>>``, left by a merge without baton's driver) is moved
aside the same way and resolved as the driver would have: our records back in place, theirs
re-chained after them. A torn tail alone is repaired as an append repairs it. Bad lines followed
by valid records are left alone (cutting them would cut the records after them); ``baton verify``
names them.
"""

from __future__ import annotations

import os

from store.base import durable
from store.base.errors import BatonError, describe
from store.base.values import Frozen
from store.ledger.ledger import LedgerError, check_link, complete_end, format_line, lines_backwards, parse_line
from store.state import journal
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


def _conflict_start(fd: int, size: int) -> int:
    """Where the first line opening a git conflict (``<<<<<<<``) starts, or -1."""
    pos, carry = 0, b"\n"
    while pos < size:
        data = carry + os.pread(fd, min(1 << 22, size - pos), pos)
        at = data.find(b"\n<<<<<<<")
        if at >= 0:
            return pos - len(carry) + at + 1
        carry, pos = data[-8:], pos + len(data) - len(carry)
    return -1


def _sides(region: bytes) -> Optional[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]]:
    """(our records, their records) when ``region`` is one whole conflict block of records, else None."""
    lines = region.split(b"\n")
    if lines[-1] != b"":
        return None
    marks = [i for i, line in enumerate(lines) if line[:7] in (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")]
    kinds = [lines[i][:7] for i in marks]
    if kinds not in ([b"<<<<<<<", b"=======", b">>>>>>>"], [b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>"]) \
            or marks[0] != 0 or marks[-1] != len(lines) - 2:
        return None
    try:
        ours = [parse_line(raw) for raw in lines[1:marks[1]]]
        theirs = [parse_line(raw) for raw in lines[marks[-2] + 1:marks[-1]]]
    except LedgerError:
        return None
    return ours, theirs


def _last_before(fd: int, offset: int) -> Optional[Dict[str, Any]]:
    for _, raw in lines_backwards(fd, 0, offset):
        return parse_line(raw)
    return None


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


def _resolve(fd: int, size: int) -> Optional[Tuple[int, bytes, List[bytes]]]:
    """(where a resolvable conflict starts, its bytes, the lines to put in its place), or None."""
    start = _conflict_start(fd, size)
    if start < 0:
        return None
    region = os.pread(fd, size - start, start)
    sides = _sides(region)
    if sides is None:
        return None
    ours, theirs = sides
    try:
        prev = _last_before(fd, start)
        for record in ours:
            check_link(record, prev)
            prev = record
    except LedgerError:
        return None
    met = _last_before(fd, start)
    from store.ledger.merge import origins, rechained

    lines = [format_line(r) for r in ours] + rechained(
        theirs, origins(ours), prev, met["seq"] if met else 0, met["hash"] if met else "0" * 32, journal.now_iso())
    return start, region, lines


class _Cut(Frozen):
    __slots__ = ("lines", "offset", "data", "torn", "kept_in", "how")

    def __init__(self, lines: int, offset: int, data: bytes, torn: int, kept_in: str, how: str) -> None:
        self.lines, self.offset, self.data, self.torn, self.kept_in, self.how = lines, offset, data, torn, kept_in, how


def _cut(layout: Layout, warnings: List[str]) -> _Cut:
    """Under the lock: move the bad end aside (or resolve a conflict) and say what was done."""
    try:
        fd = os.open(str(layout.ledger), os.O_RDONLY)
    except FileNotFoundError:
        return _Cut(0, 0, b"", 0, "", "")
    try:
        size = os.fstat(fd).st_size
        resolved = _resolve(fd, size)
        cut, bad, end = _bad_end(fd, size)
        data = os.pread(fd, size - cut, cut) if bad and resolved is None else b""
    finally:
        os.close(fd)
    if resolved is not None:
        start, region, lines = resolved
        kept_in = _keep(layout, region, start)
        os.truncate(layout.ledger, start)
        durable.append_line(layout.ledger, b"".join(lines), sync=journal.fsync_enabled(), rollback=True)
        return _Cut(region.count(b"\n"), start, region, 0, kept_in,
                    f"resolved a git conflict: our records back in place, theirs re-chained after them "
                    f"({len(lines)} line(s))")
    if not bad:
        journal.repair_tail(layout, warnings)
        return _Cut(0, end, b"", size - end, "", "")
    kept_in = _keep(layout, data, cut)
    os.truncate(layout.ledger, cut)
    return _Cut(bad, cut, data, size - end, kept_in, "")


def repair(layout: Layout, steps: Optional[Sequence[str]] = None) -> Repaired:
    """Quarantine the bad lines at the ledger's end (see the module's doc); nothing to do is fine."""
    warnings: List[str] = []
    try:
        with durable.locked(layout.lock):
            cut = _cut(layout, warnings)
    except OSError as exc:
        raise BatonError(f"cannot repair: {describe(exc, layout.ledger)}; nothing was changed") from None
    if not cut.lines:
        return Repaired(0, 0, cut.offset, "", cut.torn, None, warnings)
    from hashlib import sha256

    removed = {"offset": cut.offset, "bytes": len(cut.data), "lines": cut.lines, "torn_bytes": cut.torn,
               "sha256": sha256(cut.data).hexdigest(), "kept_in": cut.kept_in}
    note = (f"moved {cut.lines} bad line(s) ({len(cut.data)} bytes) from byte {cut.offset} of steps.jsonl to "
            f"{cut.kept_in}" + (f"; {cut.how}" if cut.how else ""))
    done = journal.commit(layout, "", "quarantine", note, {"removed": removed}, steps=steps)
    return Repaired(cut.lines, len(cut.data), cut.offset, cut.kept_in, cut.torn, done.record,
                    [*warnings, *done.warnings])
