"""Reading a file a person (or anyone who can write the project) controls, with bounds: only a
regular file, opened without blocking, and at most ``limit`` bytes.

``plan.json`` is read by every hook. As a link to ``/dev/zero`` it would be read without end, as a
FIFO it would block the open until someone writes to it, and a symbolic link loop would look like no
file at all. :func:`read_regular` refuses each of these with an :class:`Unreadable` that says which,
and never waits: a FIFO is opened with ``O_NONBLOCK`` and refused before any read.
"""

from __future__ import annotations

import os
import stat

KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class Unreadable(Exception):
    """The file exists but is not one baton will read: what it is instead, or that it is too big."""


def kind_of(mode: int) -> str:
    """``"a FIFO"``-like words for a file that is not a regular file ("" for a regular one)."""
    if stat.S_ISREG(mode):
        return ""
    return next((words for test, words in KINDS if test(mode)), "not a regular file")


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes (after following
    links). Raises :class:`Unreadable` for anything else, ``OSError`` when it cannot be opened
    (``FileNotFoundError`` when absent; a link loop is ``ELOOP``, never "absent")."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        kind = kind_of(info.st_mode)
        if kind:
            raise Unreadable(f"is {kind}, not a regular file")
        if info.st_size > limit:
            raise Unreadable(f"is {info.st_size} bytes, more than the {limit} baton reads")
        chunks, total = [], 0
        while total <= limit:  # the size may grow while it is read: never past the bound
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise Unreadable(f"grew past the {limit} bytes baton reads while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)
