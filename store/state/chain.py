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

from pathlib import Path

from store.base.values import Frozen
from store.state.ledger import GENESIS, LedgerError, check_link, parse_line
from store.state.sealing import sealed_hashes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

CHUNK = 8 << 20


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


def verify(path: Path) -> Verdict:
    """Walk the whole ledger (the one full read baton does) and name the first bad line."""
    count, last_hash, carry = 0, GENESIS, b""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return Verdict(0, GENESIS, 0, "")
    with handle:
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
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
