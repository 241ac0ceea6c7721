"""Reading a file's complete lines in large blocks: one read and one split per block, no line copied twice.

A block is read at a line start with ``os.pread`` and split at its newlines in one call; the part line
at its end is not kept but read again at the start of the next block, so no bytes are joined. A
line longer than a block is read whole by reading a larger block there.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Tuple

BLOCK = 1 << 20  # bytes one read takes in: the lines of a block stay in the processor's cache while checked
BACK = 1 << 20  # how far back line_before looks for the line ending at a border


class Lines:
    """The complete lines of ``[start, stop)`` of an open file, a block at a time; after the blocks
    are used up, ``end`` is the offset just after the last complete line and ``torn`` the bytes
    after it (a last line without its newline)."""

    def __init__(self, fd: int, start: int, stop: int, block: int = 0) -> None:
        self.fd, self.start, self.stop, self.block = fd, start, stop, block or BLOCK
        self.end, self.torn = start, b""

    def __iter__(self) -> Iterator[List[bytes]]:
        pos, want = self.start, self.block
        while pos < self.stop:
            asked = min(want, self.stop - pos)
            data = os.pread(self.fd, asked, pos)
            if not data:
                break  # the file is shorter than it was: what was read is all there is
            lines = data.split(b"\n")
            part = lines.pop()
            if not lines:  # no newline in this block
                if pos + len(data) >= self.stop or len(data) < asked:  # the range's end, or the file's
                    self.torn = part
                    return
                want *= 2  # a line longer than a block
                continue
            pos += len(data) - len(part)
            self.end, want = pos, self.block
            yield lines


def line_start(fd: int, pos: int, stop: int) -> int:
    """The first offset at or after ``pos`` where a line starts (``pos`` itself if a newline ends the
    byte before it), or ``stop`` when no line starts before it."""
    if pos <= 0:
        return 0
    at = pos - 1
    while at < stop:
        data = os.pread(fd, min(BLOCK, stop - at), at)
        if not data:
            break
        found = data.find(b"\n")
        if found >= 0:
            return min(at + found + 1, stop)
        at += len(data)
    return stop


def line_before(fd: int, pos: int) -> Optional[bytes]:
    """The line (without its newline) that ends just before ``pos``, a line start after the first;
    ``None`` when it is longer than :data:`BACK` bytes."""
    low = max(0, pos - 1 - BACK)
    data = os.pread(fd, pos - 1 - low, low)
    found = data.rfind(b"\n")
    if found < 0 and low > 0:
        return None
    return data[found + 1:]


def spans(fd: int, size: int, parts: int) -> List[Tuple[int, int]]:
    """``[start, stop)`` ranges that cut ``size`` bytes into up to ``parts`` pieces of about the same
    size, each border a line start; pieces that would be empty are left out."""
    borders = [0]
    for k in range(1, parts):
        at = line_start(fd, size * k // parts, size)
        if borders[-1] < at < size:
            borders.append(at)
    borders.append(size)
    return list(zip(borders, borders[1:])) if size else [(0, 0)]
