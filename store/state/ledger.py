"""The ledger ``steps.jsonl``: one compact JSON object per line, append-only, hash-chained.

Each record carries ``prev`` (the previous record's hash) and ``hash`` (SHA-256, first 32 hex
digits, of its own canonical JSON without ``hash``). Lines are pure ASCII: control characters and
newlines inside a note are JSON-escaped, so a note can never forge a second entry. A final line
without its newline is a *torn tail* (a writer killed mid-append): readers skip it, the next append
repairs it, ``verify`` reports it apart from corruption. The chain detects accidental or hand
edits; it is not a signature (anyone with the file can recompute it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Tuple

GENESIS = "0" * 32
REQUIRED = ("seq", "ts", "step", "status", "prev", "hash")
TAIL_CHUNK = 65536


class LedgerError(Exception):
    """A line that is not a valid record (bad JSON, missing field, broken chain)."""


def canonical(record: Dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def chain_hash(record: Dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    from hashlib import sha256  # here: only hashing needs it, and hooks that never hash start faster

    return sha256(canonical(body)).hexdigest()[:32]


def seal(fields: Dict[str, Any], seq: int, prev: str) -> Dict[str, Any]:
    """Return ``fields`` as record number ``seq`` chained to ``prev``, with its own hash."""
    record: Dict[str, Any] = {"seq": seq, **{k: v for k, v in fields.items() if k not in ("seq", "prev", "hash")}}
    record["prev"] = prev
    record["hash"] = chain_hash(record)
    return record


def format_line(record: Dict[str, Any]) -> bytes:
    return canonical(record) + b"\n"


def parse_line(raw: bytes) -> Dict[str, Any]:
    """Decode one line (without its newline) into a record, checking its shape and own hash."""
    try:
        record = json.loads(raw.decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LedgerError(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LedgerError("not a JSON object")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise LedgerError(f"missing field(s) {', '.join(missing)}")
    if not isinstance(record["seq"], int) or not isinstance(record["hash"], str):
        raise LedgerError("seq or hash has the wrong type")
    if chain_hash(record) != record["hash"]:
        raise LedgerError("hash does not match the content (edited by hand?)")
    return record


class Tail(Frozen):
    """The end of the ledger: the last complete record and any torn bytes after it."""

    __slots__ = ("last", "complete_size", "torn")

    def __init__(self, last: Optional[Dict[str, Any]], complete_size: int, torn: bytes) -> None:
        self.last = last
        self.complete_size = complete_size  # bytes up to and including the last newline
        self.torn = torn  # bytes after the last newline (empty when the file ends cleanly)


def _read_end(path: Path, newlines: int) -> Optional[Tuple[bytes, int, int]]:
    """(the file's last bytes holding at least ``newlines`` newlines or all of it, the offset where
    they start, the file size), read backwards in chunks; ``None`` when the file does not exist."""
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        buf, pos = b"", size
        while pos > 0 and buf.count(b"\n") < newlines:
            step = min(TAIL_CHUNK, pos)
            pos -= step
            buf = os.pread(fd, step, pos) + buf
    finally:
        os.close(fd)
    return buf, pos, size


def read_tail(path: Path) -> Tail:
    """Read only the end of the file: cost independent of the ledger's length."""
    end = _read_end(path, 2)  # two newlines isolate the last complete line
    if end is None:
        return Tail(None, 0, b"")
    buf, _, size = end
    last_nl = buf.rfind(b"\n")
    torn = buf[last_nl + 1:]
    body = buf[: last_nl + 1]
    complete_size = size - len(torn)
    if not body.strip():
        return Tail(None, complete_size, torn)
    start = body.rfind(b"\n", 0, len(body) - 1) + 1
    return Tail(parse_line(body[start:-1]), complete_size, torn)


def read_last(path: Path, count: int) -> Tuple[List[Dict[str, Any]], bytes]:
    """The last ``count`` complete records (oldest first) and the torn tail, reading backwards."""
    end = _read_end(path, count + 2)
    if end is None:
        return [], b""
    buf, pos, _ = end
    last_nl = buf.rfind(b"\n")
    torn, lines = buf[last_nl + 1:], buf[: last_nl + 1].split(b"\n")[:-1]
    if pos > 0:
        lines = lines[1:]  # the first piece may start mid-line
    records = []
    for raw in lines[-count:] if count > 0 else []:
        try:
            records.append(parse_line(raw))
        except LedgerError:
            continue  # verify names bad lines; readers keep going
    return records, torn


def iter_lines(path: Path, start: int = 0) -> Iterator[Tuple[int, bytes, bool]]:
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


def check_link(record: Dict[str, Any], prev: Optional[Dict[str, Any]]) -> None:
    """Raise :class:`LedgerError` unless ``record`` follows ``prev`` in the chain."""
    want_seq = 1 if prev is None else prev["seq"] + 1
    want_prev = GENESIS if prev is None else prev["hash"]
    if record["prev"] != want_prev:
        raise LedgerError(f"chain broken: prev is {record['prev'][:12]}, expected {want_prev[:12]} "
                          "(a line before it was changed, removed or reordered)")
    if record["seq"] != want_seq:
        raise LedgerError(f"seq is {record['seq']}, expected {want_seq} (lines removed or reordered)")


def read_at(path: Path, offset: int, limit: int = 16 * 1024 * 1024) -> Optional[Dict[str, Any]]:
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
