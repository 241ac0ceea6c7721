"""Hashing sealed lines: SHA-256 over a record's canonical bytes, for one line or a chunk at once.

A line baton seals ends with its ``hash`` member, so the bytes before it are exactly what was
hashed: a line can be checked without decoding it. One line is hashed with the interpreter's
built-in SHA-256 (loading OpenSSL costs a short process more than the hashing); a process that
hashes many lines switches to ``hashlib``, and a chunk is checked with few Python steps per line.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Optional

BULK_AFTER = 64  # lines hashed before one_sha256 loads OpenSSL


def sha256_maker(bulk: bool = False) -> Any:
    """The SHA-256 constructor: the interpreter's built-in one for a few short inputs (no OpenSSL to
    load), ``hashlib``'s for many."""
    if not bulk:
        for name in ("_sha256", "_sha2"):  # the built-in module: Python 3.9-3.11, then 3.12+
            try:
                return __import__(name).sha256
            except ImportError:
                continue
    from hashlib import sha256

    return sha256


_HASHING: List[Any] = [None, 0]  # the sha256 maker in use, lines hashed so far


def one_sha256(data: bytes) -> str:
    """The SHA-256 hex digest of one line. The first few go through the interpreter's built-in
    module: ``hashlib`` loads OpenSSL, which costs a short process (a hook, ``baton record``)
    several milliseconds; a process that hashes many lines switches to OpenSSL, which is faster
    per line."""
    _HASHING[1] += 1
    if _HASHING[0] is None or _HASHING[1] == BULK_AFTER:
        _HASHING[0] = sha256_maker(_HASHING[1] >= BULK_AFTER)
    return str(_HASHING[0](data).hexdigest())


HASH_MEMBER = b',"hash":"'
SEALED_TAIL = len(HASH_MEMBER) + 32 + 2  # ',"hash":"' + 32 hex digits + '"}' end every sealed line


def sealed_intact(raw: bytes) -> bool:
    """True when ``raw`` is byte for byte a line that :func:`seal` and :func:`format_line` made: the
    SHA-256 of its bytes without the final ``hash`` member is the hash it states. This needs no JSON
    decoding; a line that fails it may still be a valid record written in another form."""
    if raw[-SEALED_TAIL:-34] != HASH_MEMBER or raw[-2:] != b'"}':
        return False
    return one_sha256(raw[:-SEALED_TAIL] + b"}")[:32].encode("ascii") == raw[-34:-2]


def sealed_hashes(lines: List[bytes]) -> Optional[bytes]:
    """:func:`sealed_intact` for many lines at once, with few Python steps per line: the hashes the
    lines state, joined, when every line is whole and as baton sealed it; ``None`` otherwise."""
    from binascii import hexlify
    from hashlib import sha256
    from operator import itemgetter

    tails = b"".join(map(itemgetter(slice(-SEALED_TAIL, None)), lines))
    stated = tails.replace(HASH_MEMBER, b"").replace(b'"}', b"")  # neither can occur in hex digits
    if len(stated) != 32 * len(lines) or len(tails) != SEALED_TAIL * len(lines):
        return None
    digests = b"".join([sha256(line[:-SEALED_TAIL] + b"}").digest()[:16] for line in lines])
    return stated if stated == hexlify(digests) else None


def all_sealed(lines: List[bytes]) -> bool:
    return sealed_hashes(lines) is not None
