"""Verifying the ledger's hash chain over the whole file, fast, naming the first bad line.

A line whose bytes are exactly what baton seals is accepted from its bytes: the SHA-256 of the line
without its final ``hash`` member is that hash, ``seq`` is the next number and ``prev`` the
previous line's hash, each read where ``seal`` puts it. This is checked a block of lines at a time,
with one Python step per line (its hash) and no JSON decoding. A block holding any line that fails
is walked again line by line with the full check (decode, fields, own hash over the canonical form,
link), which names the first bad line as it always did and still accepts valid records written in
another form. The two can only disagree on a line forged by hashing bytes that are not a record,
which a chain without a key never claimed to stop.

A long ledger is cut at line starts into a piece per processor, checked at once in forked workers
(``ranges``), each from the record just before its piece; a piece's verdict counts only when the
pieces before it are intact and end on that very record, else it is checked again here from where
they end, so the links across the borders are checked too and the verdict is the one-pass verdict.
"""

from __future__ import annotations

import os
from binascii import hexlify
from hashlib import sha256
from operator import itemgetter

from store.base import jsonc
from store.base.values import Frozen
from store.ledger import ranges
from store.ledger.ledger import GENESIS, LedgerError, check_link, parse_line
from store.ledger.linescan import Lines, line_before, spans

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, Iterable, List, Optional, Tuple

BLOCK = 1 << 20  # bytes of lines checked at once
SPLIT_BYTES = 32 << 20  # from this size verify checks pieces at once, one per processor
PARTS = 0  # pieces to cut a long ledger into; 0: one per processor, at most MAX_PARTS
MAX_PARTS = 8
FORK = True  # False: every piece checked here, one after another (what a platform without fork does)

# The last 84 bytes of a sealed line, hex digits read as 0: '"prev":"' + 32 hex + '","hash":"' + 32 hex + '"}'.
# Read so, the hex letters of the keys ("pr_e_v", "h_a_sh") would be 0 too: they are compared as they are.
_HEX_AS_ZERO = bytes.maketrans(b"0123456789abcdef", b"0" * 16)
_SEALED_END = b'"prev":"' + b"0" * 32 + b'","hash":"' + b"0" * 32 + b'"}'
_KEY_LETTERS = [(at, _SEALED_END[at:at + 1]) for at, c in enumerate(_SEALED_END) if c in b"abcdef"]
_SEALED_END = _SEALED_END.translate(_HEX_AS_ZERO)
_END, _PREV, _HASH = len(_SEALED_END), 8, 50  # where prev and hash start in those bytes
_ends = itemgetter(slice(-_END, None))


class Verdict(Frozen):
    __slots__ = ("records", "last_hash", "torn", "problem")

    def __init__(self, records: int, last_hash: str, torn: int, problem: str) -> None:
        self.records, self.last_hash, self.torn = records, last_hash, torn
        self.problem = problem  # empty when the chain is intact


def _numbered(lines: List[bytes], seq: int) -> bool:
    """True when the lines begin ``{"seq":N,`` with N counting on from ``seq``: their beginnings
    joined, against the same text made in one step for each run of numbers of one length."""
    done, count = 0, len(lines)
    while done < count:
        first = seq + 1 + done
        digits = len(str(first))
        run = min(count - done, 10 ** digits - first)
        group = lines[done:done + run] if run < count else lines
        if b"".join(map(itemgetter(slice(8 + digits)), group)) != \
                (b'{"seq":%d,' * run) % tuple(range(first, first + run)):
            return False
        done += run
    return True


def sealed_run(lines: List[bytes], seq: int, prev_hash: bytes) -> bool:
    """True when every line is a sealed record and they chain on from record ``seq`` (hash
    ``prev_hash``), judged from the bytes alone: each line ends as ``seal`` ends it, its ``prev`` is
    the hash the line before states, its ``seq`` the next number, and its hash its bytes' SHA-256.
    Apart from hashing, each check is a few calls over the whole block's bytes, not a step a line."""
    ends = b"".join(map(_ends, lines))
    if ends.translate(_HEX_AS_ZERO) != _SEALED_END * len(lines) or ends[_PREV:_PREV + 32] != prev_hash:
        return False
    for at, letter in _KEY_LETTERS:
        if ends[at::_END] != letter * len(lines):
            return False
    for j in range(32):  # byte j of each prev, against byte j of the hash the line before states
        if ends[_END + _PREV + j::_END] != ends[_HASH + j:-_END:_END]:
            return False
    if not _numbered(lines, seq):
        return False
    digests = hexlify(b"".join([sha256(line[:-43] + b"}").digest() for line in lines]))
    for j in range(32):  # byte j of each stated hash, against byte j of each line's hex digest
        if ends[_HASH + j::_END] != digests[j::64]:
            return False
    return True


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


def _scan(fd: int, start: int, stop: int, count: int, last_hash: str) -> Verdict:
    """Verify the lines in ``[start, stop)`` as following record ``count`` (hash ``last_hash``); a
    problem's line number counts from the ledger's first line (``count`` valid lines precede)."""
    lines = Lines(fd, start, stop, BLOCK)
    for block in lines:
        ranges.stop_if_abandoned()
        if sealed_run(block, count, last_hash.encode("ascii")):
            count, last_hash = count + len(block), block[-1][-34:-2].decode("ascii")
            continue
        prev = {"seq": count, "hash": last_hash} if count else None
        last, problem = _walk(block, prev, count)
        if problem:
            return Verdict(last["seq"] if last else 0, last["hash"] if last else GENESIS, 0, problem)
        count, last_hash = count + len(block), str(last["hash"]) if last else GENESIS
    return Verdict(count, last_hash, len(lines.torn), "")


def _pieces(fd: int, size: int) -> List[Tuple[int, int, int, str]]:
    """(start, stop, the records before it, the last one's hash) for each piece of the ledger: a
    piece per processor from :data:`SPLIT_BYTES` on, else one. A piece starts after a line that is
    a valid record, whose seq and hash it is checked from; a border after any other line is dropped."""
    parts = (PARTS or min(ranges.processors(), MAX_PARTS)) if size >= SPLIT_BYTES else 1
    pieces: List[Tuple[int, int, int, str]] = []
    for start, stop in spans(fd, size, parts):
        raw = line_before(fd, start) if start else None
        try:
            before = parse_line(raw) if raw is not None else None
        except LedgerError:
            before = None
        if start and before is None:
            pieces[-1] = pieces[-1][:1] + (stop,) + pieces[-1][2:]
        else:
            pieces.append((start, stop, before["seq"], before["hash"]) if before else (start, stop, 0, GENESIS))
    return pieces


def verify(path: Path) -> Verdict:
    """Walk the whole ledger (the one full read baton does) and name the first bad line. A long
    ledger is checked in pieces at once where processes can fork; the verdict is the one-pass one."""
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except FileNotFoundError:
        return Verdict(0, GENESIS, 0, "")
    try:
        pieces = _pieces(fd, os.fstat(fd).st_size)

        def work(piece: Tuple[int, int, int, str]) -> bytes:
            verdict = _scan(fd, *piece)
            return jsonc.dumps([verdict.records, verdict.last_hash, verdict.torn, verdict.problem]).encode()

        answers = ranges.answers(work, pieces, FORK)
        try:
            count, last_hash, verdict = 0, GENESIS, Verdict(0, GENESIS, 0, "")
            for (start, stop, after, after_hash), answer in zip(pieces, answers):
                if answer is not None and (after, after_hash) == (count, last_hash):
                    verdict = Verdict(*jsonc.loads(answer))
                else:  # no worker did it, or it started from a record the pieces before do not end on
                    verdict = _scan(fd, start, stop, count, last_hash)
                if verdict.problem:
                    return verdict
                count, last_hash = verdict.records, verdict.last_hash
            return verdict
        finally:
            answers.close()
    except OSError as exc:  # a read of an open descriptor fails without a file name (a folder, EIO)
        if exc.filename is None:
            exc.filename = str(path)
        raise
    finally:
        os.close(fd)
