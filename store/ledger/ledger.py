"""The ledger ``steps.jsonl``: one compact JSON object per line, append-only, hash-chained.

Each record carries ``prev`` (the previous record's hash) and ``hash`` (SHA-256, first 32 hex
digits, of its own canonical JSON without ``hash``). Lines are pure ASCII: control characters and
newlines inside a note are JSON-escaped, so a note can never forge a second entry. A final line
without its newline is a *torn tail* (a writer killed mid-append): readers skip it, the next append
repairs it, ``verify`` reports it apart from corruption. The chain detects accidental or hand
edits; it is not a signature (anyone with the file can recompute it).
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.base.values import Frozen
from store.ledger.sealing import one_sha256, sealed_intact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

GENESIS = "0" * 32
REQUIRED = ("seq", "ts", "step", "status", "prev", "hash")
TAIL_CHUNK = 65536


class LedgerError(Exception):
    """A line that is not a valid record (bad JSON, missing field, broken chain)."""


def canonical(record: Dict[str, Any]) -> bytes:
    return jsonc.dumps(record, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def chain_hash(record: Dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return one_sha256(canonical(body))[:32]


def seal(fields: Dict[str, Any], seq: int, prev: str) -> Dict[str, Any]:
    """Return ``fields`` as record number ``seq`` chained to ``prev``, with its own hash. Every sealed
    record has the required fields, so a line whose bytes match its hash is a whole record."""
    missing = [k for k in REQUIRED[1:4] if k not in fields]
    if missing:
        raise LedgerError(f"cannot seal a record without {', '.join(missing)}")
    record: Dict[str, Any] = {"seq": seq, **{k: v for k, v in fields.items() if k not in ("seq", "prev", "hash")}}
    record["prev"] = prev
    record["hash"] = chain_hash(record)
    return record


def format_line(record: Dict[str, Any]) -> bytes:
    return canonical(record) + b"\n"


def parse_line(raw: bytes) -> Dict[str, Any]:
    """Decode one line (without its newline) into a record, checking its shape and own hash."""
    try:
        record = jsonc.loads(raw.decode("ascii"))
    except (UnicodeDecodeError, jsonc.JSONDecodeError) as exc:
        raise LedgerError(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LedgerError("not a JSON object")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise LedgerError(f"missing field(s) {', '.join(missing)}")
    if not isinstance(record["seq"], int) or not isinstance(record["hash"], str):
        raise LedgerError("seq or hash has the wrong type")
    if not (sealed_intact(raw) and record["hash"].encode("ascii") == raw[-34:-2]) \
            and chain_hash(record) != record["hash"]:
        raise LedgerError("hash does not match the content (edited by hand?)")
    return record


class Tail(Frozen):
    """The end of the ledger: the last complete record and any torn bytes after it."""

    __slots__ = ("last", "complete_size", "torn")

    def __init__(self, last: Optional[Dict[str, Any]], complete_size: int, torn: bytes) -> None:
        self.last = last
        self.complete_size = complete_size  # bytes up to and including the last newline
        self.torn = torn  # bytes after the last newline (empty when the file ends cleanly)


def _open(path: Union[str, Path]) -> Optional[int]:
    try:
        return os.open(str(path), os.O_RDONLY)
    except FileNotFoundError:
        return None


def _named(exc: OSError, path: Union[str, Path]) -> OSError:
    """``exc`` naming ``path`` (a read of an open descriptor fails without a file name)."""
    if exc.filename is None:
        exc.filename = str(path)
    return exc


def _start_of_last(fd: int, end: int, count: int) -> int:
    """Offset where the last ``count`` lines before ``end`` start (``end`` is just after a newline,
    or 0), reading backwards in chunks and counting newlines: linear in the bytes it reads."""
    if count <= 0:
        return end
    pos, seen = end - 1, 0  # the newline ending the last line is not a line start
    while pos > 0:
        low = max(0, pos - TAIL_CHUNK)
        chunk = os.pread(fd, pos - low, low)
        found = chunk.count(b"\n")
        if seen + found >= count:
            at = len(chunk)
            for _ in range(count - seen):
                at = chunk.rfind(b"\n", 0, at)
            return low + at + 1
        seen, pos = seen + found, low
    return 0


def lines_backwards(fd: int, start: int, end: int) -> Iterator[Tuple[int, bytes]]:
    """``(offset, line without newline)`` of the complete lines in ``[start, end)``, newest first;
    ``start`` is a line start and ``end`` just after a newline. Reads backwards in chunks."""
    cut, span = end, TAIL_CHUNK
    while cut > start:
        low = max(start, cut - span)
        lines = os.pread(fd, cut - low, low).split(b"\n")[:-1]
        first = 0 if low == start else 1  # above ``start`` the first piece may begin before ``low``
        if first >= len(lines):
            span *= 2  # one line longer than the span: read further back
            continue
        at = cut
        for raw in reversed(lines[first:]):
            at -= len(raw) + 1
            yield at, raw
        cut, span = at, TAIL_CHUNK


def complete_end(fd: int, size: int, start: int = 0) -> int:
    """Just after the last newline at or after ``start`` (``start`` when there is none): where a
    torn tail begins."""
    pos = size
    while pos > start:
        low = max(start, pos - TAIL_CHUNK)
        at = os.pread(fd, pos - low, low).rfind(b"\n")
        if at >= 0:
            return low + at + 1
        pos = low
    return start


def read_tail(path: Union[str, Path]) -> Tail:
    """Read only the end of the file: cost independent of the ledger's length."""
    fd = _open(path)
    if fd is None:
        return Tail(None, 0, b"")
    try:
        size = os.fstat(fd).st_size
        end = complete_end(fd, size)
        torn = os.pread(fd, size - end, end) if size > end else b""
        start = _start_of_last(fd, end, 1)
        last = os.pread(fd, end - 1 - start, start) if end else b""
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        os.close(fd)
    if not last.strip():
        return Tail(None, end, torn)
    return Tail(parse_line(last), end, torn)


def last_lines(path: Union[str, Path], count: int) -> Tuple[int, int, bytes]:
    """(where the last ``count`` complete lines start, where they end, the torn tail after them)."""
    fd = _open(path)
    if fd is None:
        return 0, 0, b""
    try:
        size = os.fstat(fd).st_size
        end = complete_end(fd, size)
        torn = os.pread(fd, size - end, end) if size > end else b""
        return _start_of_last(fd, end, count), end, torn
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        os.close(fd)


def iter_records(path: Union[str, Path], start: int, end: int) -> Iterator[Dict[str, Any]]:
    """The records of the complete lines between ``start`` and ``end``, streaming; lines that are
    not valid records are skipped (``verify`` names them)."""
    for offset, raw, complete in iter_lines(path, start):
        if offset >= end or not complete:
            return
        try:
            yield parse_line(raw)
        except LedgerError:
            continue


def read_last(path: Union[str, Path], count: int) -> Tuple[List[Dict[str, Any]], bytes]:
    """The last ``count`` complete records (oldest first) and the torn tail, reading backwards."""
    start, end, torn = last_lines(path, count)
    return (list(iter_records(path, start, end)) if count > 0 else []), torn


def iter_lines(path: Union[str, Path], start: int = 0) -> Iterator[Tuple[int, bytes, bool]]:
    """Yield ``(offset, line without newline, complete)`` from byte ``start``, streaming."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    with handle:
        handle.seek(start)
        offset = start
        for raw in handle:
            complete = raw.endswith(b"\n")
            yield offset, raw[:-1] if complete else raw, complete
            offset += len(raw)


def iter_objects(path: Union[str, Path], start: int = 0) -> Iterator[Tuple[int, Optional[Dict[str, Any]]]]:
    """Each complete line from byte ``start`` as ``(the offset after it, its JSON object)``, the
    object ``None`` for a blank line or one that is not a JSON object; a torn last line ends it.
    For readers that follow a JSON-lines file by offset (the figures, the export)."""
    for offset, raw, complete in iter_lines(path, start):
        if not complete:
            return
        try:
            value = jsonc.loads(raw) if raw.strip() else None
        except ValueError:
            value = None
        yield offset + len(raw) + 1, value if isinstance(value, dict) else None


def check_link(record: Dict[str, Any], prev: Optional[Dict[str, Any]]) -> None:
    """Raise :class:`LedgerError` unless ``record`` follows ``prev`` in the chain."""
    want_seq = 1 if prev is None else prev["seq"] + 1
    want_prev = GENESIS if prev is None else prev["hash"]
    if record["prev"] != want_prev:
        raise LedgerError(f"chain broken: prev is {record['prev'][:12]}, expected {want_prev[:12]} "
                          "(a line before it was changed, removed or reordered)")
    if record["seq"] != want_seq:
        raise LedgerError(f"seq is {record['seq']}, expected {want_seq} (lines removed or reordered)")


def read_at(path: Union[str, Path], offset: int, limit: int = 16 * 1024 * 1024) -> Optional[Dict[str, Any]]:
    """The record whose line starts at byte ``offset`` (found through the snapshot, so one read,
    not a scan); ``None`` when there is no complete, valid line there."""
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if offset > 0 and os.pread(fd, 1, offset - 1) != b"\n":
            return None  # not the start of a line: the index does not match this ledger
        buf = b""
        while b"\n" not in buf and len(buf) < limit:
            chunk = os.pread(fd, TAIL_CHUNK, offset + len(buf))
            if not chunk:
                return None
            buf += chunk
    finally:
        os.close(fd)
    end = buf.find(b"\n")
    if end < 0:
        return None
    try:
        return parse_line(buf[:end])
    except LedgerError:
        return None
