"""Finds and kills every process a CLI run started, by an environment tag (Linux /proc).

The CLI starts each hook and each Bash tool command in a new session (its own process
group), so killing the CLI's process group leaves them running, re-parented to init. They
do inherit the CLI's environment, so the driver puts `TAG_VAR=<tag>` there and this module
finds live processes carrying it, whichever group or parent they have now.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

TAG_VAR = "BATON_E2E_TAG"


def tagged_pids(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment holds TAG_VAR=tag."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_tagged(tag: str, timeout: float = 10.0) -> list[str]:
    """SIGKILL every tagged process and its process group (never the caller's own group), pass after
    pass until none is left or `timeout` ends (a process started while a pass ran, such as a leftover
    a wrapper forks into a session of its own, is caught by the next); the command lines of any
    still alive then."""
    own_group = os.getpgrp()
    deadline = time.monotonic() + timeout
    while True:
        pids = tagged_pids(tag)
        if not pids or time.monotonic() >= deadline:
            return [command(pid) for pid in pids]
        for pid in pids:
            try:
                group = os.getpgid(pid)
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def command(pid: int) -> str:
    try:
        return f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return f"{pid}: (gone)"


def group_gone(pgid: int, timeout: float = 5.0) -> bool:
    """Poll until no process is left in group `pgid`; False if one is still there at timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def tagged_gone(tag: str, timeout: float = 5.0) -> bool:
    """Poll until no tagged process is alive; False if one still is at timeout."""
    deadline = time.monotonic() + timeout
    while tagged_pids(tag):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
