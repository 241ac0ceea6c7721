"""Reading a file the model may have swapped: it never blocks and never reads without end.

Hooks read files in the project (settings, ``.npmrc``, ``package.json``, ``.gitmodules``, a file an
Edit changes) that a command may have replaced with a FIFO, a device or a symlink to one, or made
huge. A hook stuck on such a file is a gate that never answers. :func:`read` opens only a regular
file (checked before the open and again on the descriptor, opened with ``O_NONBLOCK`` so a FIFO
swapped in between does not wait for a writer) and reads at most ``limit`` bytes; anything else is
an ``OSError`` (:class:`NotRegular`, :class:`TooBig`), which callers already treat as unreadable.
"""

from __future__ import annotations

import os
import stat

FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """Not a regular file (a FIFO, a device, a socket, a folder)."""


class TooBig(OSError):
    """Larger than the caller's limit."""


def read(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (following symlinks), if it holds at most ``limit``."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotRegular(f"{path} is not a regular file")
    fd = os.open(path, FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if st.st_size > limit:
            raise TooBig(f"{path} is larger than {limit} bytes")
        chunks, left = [], limit + 1  # one byte more tells a file that grew past the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooBig(f"{path} is larger than {limit} bytes")
    return data
