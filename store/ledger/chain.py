"""Verifying the ledger's hash chain over the whole file, fast, naming the first bad line.

A line whose bytes are exactly what baton seals is accepted from its bytes: the SHA-256 of the line
without its final ``hash`` member is that hash, ``seq`` is the next number and ``prev`` the
previous line's hash, each read where ``seal`` puts it. This is checked a chunk of lines at a time,
with a few Python steps per line and no JSON decoding. A chunk holding any line that fails is walked
again line by line with the full check (decode, fields, own hash over the canonical form, link),
which names the first bad line as it always did and still accepts valid records written in another
form. The two can only disagree on a line forged by hashing bytes that are not a record, which a
chain without a key never claimed to stop.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from store.base import jsonc
from store.base.values import Frozen
from store.ledger.ledger import GENESIS, LedgerError, check_link, parse_line
from store.ledger.sealing import sealed_hashes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple

CHUNK = 8 << 20
SPLIT_BYTES = 32 << 20  # from this size verify checks two halves at once


class Verdict(Frozen):
    __slots__ = ("records", "last_hash", "torn", "problem")

    def __init__(self, records: int, last_hash: str, torn: int, problem: str) -> None:
        self.records, self.last_hash, self.torn = records, last_hash, torn
        self.problem = problem  # empty when the chain is intact


def sealed_run(lines: List[bytes], seq: int, prev_hash: bytes) -> bool:
    """True when every line is a sealed record and they chain on from record ``seq`` (hash
    ``prev_hash``), judged from the bytes alone."""
    from operator import itemgetter

    hashes = sealed_hashes(lines)
    if hashes is None:
        return False
    if b"".join(map(itemgetter(slice(-76, -44)), lines)) != prev_hash + hashes[:-32]:  # each prev, in place
        return False
    expected = map(b'{"seq":%d,'.__mod__, range(seq + 1, seq + len(lines) + 1))
    return all(map(bytes.startswith, lines, expected))


def _walk(lines: List[bytes], prev: Optional[Dict[str, Any]], line_no: int) -> Tuple[Optional[Dict[str, Any]], str]:
    """The full check, line by line: (the last record, the first problem or '')."""
    for offset, raw in enumerate(lines):
        try:
            record = parse_line(raw)
            check_link(record, prev)
        except LedgerError as exc:
            return prev, f"line {line_no + offset + 1}: {exc}"
        prev = record
    return prev, ""


def verify_lines(lines: Iterable[Tuple[int, bytes, bool]]) -> Verdict:
    """The full check over ``(position, line, complete)`` in order, for records that are not one
    file (a database's): the first bad line is named as :func:`verify` names it."""
    prev: Optional[Dict[str, Any]] = None
    count = 0
    for _, raw, complete in lines:
        last_hash = prev["hash"] if prev else GENESIS
        if not complete:
            return Verdict(count, last_hash, len(raw), "")
        prev, problem = _walk([raw], prev, count)
        if problem:
            return Verdict(count, last_hash, 0, problem)
        count += 1
    return Verdict(count, prev["hash"] if prev else GENESIS, 0, "")


def _scan(path: Path, start: int, stop: int, count: int, last_hash: str) -> Verdict:
    """Verify the lines in ``[start, stop)`` as following record ``count`` (hash ``last_hash``); a
    problem's line number counts from the ledger's first line (``count`` valid lines precede)."""
    carry = b""
    with open(path, "rb") as handle:
        handle.seek(start)
        left = stop - start
        while left > 0:
            chunk = handle.read(min(CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            lines = (carry + chunk).split(b"\n")
            carry = lines.pop()
            if not lines or sealed_run(lines, count, last_hash.encode("ascii")):
                if lines:
                    count, last_hash = count + len(lines), lines[-1][-34:-2].decode("ascii")
                continue
            prev = {"seq": count, "hash": last_hash} if count else None
            last, problem = _walk(lines, prev, count)
            if problem:
                return Verdict(last["seq"] if last else 0, last["hash"] if last else GENESIS, 0, problem)
            count, last_hash = count + len(lines), str(last["hash"]) if last else GENESIS
    return Verdict(count, last_hash, len(carry), "")


def _middle(path: Path, size: int) -> Optional[Tuple[int, Dict[str, Any]]]:
    """(a line start near the middle, the record just before it), or None when there is none."""
    with open(path, "rb") as handle:
        handle.seek(size // 2)
        handle.readline()  # to the end of the line holding the middle byte
        mid = handle.tell()
        if mid >= size:
            return None
        back = min(mid, 1 << 20)
        handle.seek(mid - back)
        before = handle.read(back - 1).rsplit(b"\n", 1)
    if len(before) < 2 and back < mid:
        return None  # a line longer than 1 MB: not worth the trouble
    try:
        return mid, parse_line(before[-1])
    except LedgerError:
        return None  # the first half holds a bad line: a single pass names it


def verify(path: Path) -> Verdict:
    """Walk the whole ledger (the one full read baton does) and name the first bad line. A long
    ledger is checked in two halves at once where processes can fork: a child checks the second
    half from the record before it, and its verdict counts only when the first half is intact."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return Verdict(0, GENESIS, 0, "")
    middle = _middle(path, size) if size >= SPLIT_BYTES and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 \
        else None
    if middle is None:
        return _scan(path, 0, size, 0, GENESIS)
    mid, before = middle
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's work is checked through its verdict
        os.close(reader)
        try:
            second = _scan(path, mid, size, before["seq"], before["hash"])
            os.write(writer, jsonc.dumps([second.records, second.last_hash, second.torn, second.problem]).encode())
        finally:
            os._exit(0)
    os.close(writer)
    try:
        first = _scan(path, 0, mid, 0, GENESIS)
        if first.problem or (first.records, first.last_hash) != (before["seq"], before["hash"]):
            os.kill(pid, signal.SIGKILL)
            return first if first.problem else _scan(path, mid, size, first.records, first.last_hash)
        with os.fdopen(reader, "rb") as pipe:
            reader, answer = -1, pipe.read()
    finally:
        if reader >= 0:
            os.close(reader)
        os.waitpid(pid, 0)
    if not answer:  # the child failed: check the second half here
        return _scan(path, mid, size, first.records, first.last_hash)
    records, last_hash, torn, problem = jsonc.loads(answer)
    return Verdict(records, last_hash, torn, problem)
