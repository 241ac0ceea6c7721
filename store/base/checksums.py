"""``zlib.crc32`` and ``zlib.adler32`` in Python, for short inputs such as a folder's path.

The sandbox names a job's private folder by both checksums of its state folder's path. Loading
``zlib`` (a shared library) costs a Bash gate call more than computing them here for a path.
``tests/base/test_checksums.py`` checks both against ``zlib``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

_TABLE: List[int] = []


def crc32(data: bytes, value: int = 0) -> int:
    """``zlib.crc32(data, value)``: CRC-32 (the reflected polynomial 0xEDB88320)."""
    if not _TABLE:
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
            _TABLE.append(c)
    table = _TABLE
    crc = value ^ 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def adler32(data: bytes, value: int = 1) -> int:
    """``zlib.adler32(data, value)``."""
    a, b = value & 0xFFFF, (value >> 16) & 0xFFFF
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return ((b % 65521) << 16) | (a % 65521)  # a start value out of range comes back reduced, as zlib's does
