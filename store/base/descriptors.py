"""File descriptors a process was handed: which of them are open, and a child's exit status as a shell
reports it. The sandbox's launchers (the broker, the network proxy) pass some of theirs on to bwrap,
and baton's command inside the sandbox stands in for a missing standard stream."""

from __future__ import annotations

import os


def is_open(fd: int) -> bool:
    """``fd`` is open in this process."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def shell_status(code: int) -> int:
    """A ``Popen.wait()`` result as a shell reports it: a child killed by signal N is 128 + N."""
    return code if code >= 0 else 128 - code
