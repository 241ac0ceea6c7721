"""Waiting, in tests, for the detached process that rebuilds a job's snapshot to finish."""

from __future__ import annotations

import os
from pathlib import Path


def wait_for_rebuild(state: Path, timeout: float = 120) -> bytes:
    """Wait until the detached snapshot rebuild of the job in ``state`` (a ``.baton`` folder) has
    saved a valid ``state.json`` and let go of ``rebuild.lock``; return the snapshot's bytes."""
    import fcntl
    import time

    from store.state.snapshot import Snapshot

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = state / "state.json"
        if path.is_file() and Snapshot.from_bytes(path.read_bytes()) is not None:
            fd = os.open(str(state / "rebuild.lock"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return (state / "state.json").read_bytes()
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.05)
    raise AssertionError(f"no snapshot saved in {state} within {timeout} s")
