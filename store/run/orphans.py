"""No process outlives its session: ``baton run`` adopts orphans and ends them after each session.

Claude Code starts every hook and every Bash command in a session (a process group) of its own, so
signalling its group misses them, and when Claude Code is killed they are re-parented. On Linux
``baton run`` makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): whatever its
sessions leave behind is re-parented to it instead of to init, and :func:`sweep` finds those
processes in ``/proc``, sends their groups SIGTERM, then SIGKILL after a grace period, and reaps
them. Elsewhere only the session's own process group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Collection, List

PR_SET_CHILD_SUBREAPER = 36
GRACE = 2.0
ROUNDS = 10


def become_subreaper() -> bool:
    """Ask Linux to re-parent this process's orphaned descendants to it; False where impossible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def children(parent: int) -> List[int]:
    """Live or zombie processes whose parent is ``parent`` (read from ``/proc``; [] without it)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(name))
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        group = os.getpgid(pid)
        if group != os.getpgrp():
            os.killpg(group, sig)
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


def _reap(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def sweep(keep: Collection[int] = (), grace: float = GRACE) -> List[int]:
    """End every child of this process except ``keep`` (TERM, then KILL after ``grace``); reap them.

    Only call it when no child this process still waits for through ``subprocess`` is running, or
    pass that child in ``keep``: reaping it here would hide its exit status.
    """
    ended: List[int] = []
    for _ in range(ROUNDS):  # ending one orphan may re-parent its own children to us: look again
        found = [pid for pid in children(os.getpid()) if pid not in keep]
        if not found:
            break
        for pid in found:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        waiting = list(found)
        while waiting and time.monotonic() < deadline:
            waiting = [pid for pid in waiting if not _reap(pid)]
            if waiting:
                time.sleep(0.05)
        for pid in waiting:
            _signal(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        ended += found
    return ended
