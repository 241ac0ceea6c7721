"""One ``baton run`` per job: an exclusive lock on ``.baton/run.lock`` held for the run's lifetime.

The lock is an ``flock`` on an open descriptor, so it goes away with the process however it ends
(even SIGKILL); the file only names the holder (pid and start time) for the refusal message.
Where ``fcntl`` does not exist the lock is not taken, as for the ledger.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from store.base.durable import named
from store.base.errors import BatonError

try:  # pragma: no cover - the import is what differs between platforms
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

BUSY = 7  # exit code: another baton run holds this job


class RunLock:
    """``with RunLock(path):`` holds the job for this process or raises a :class:`BatonError` (BUSY)."""

    def __init__(self, path: Path) -> None:
        self.path, self.fd = path, -1

    def __enter__(self) -> RunLock:
        fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 200).decode("ascii", "replace").split()
                os.close(fd)
                pid = holder[0] if holder else "unknown"
                since = f", started {holder[1]}" if len(holder) > 1 else ""
                raise BatonError(f"another baton run is already running this job (pid {pid}{since}); "
                                 f"wait for it, or stop it with `kill -TERM {pid}`", BUSY) from None
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {stamp}\n".encode("ascii"))
        except OSError as exc:  # a full disk: the run could record nothing; say where, hold nothing
            os.close(fd)
            named(exc, self.path)
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            try:
                os.ftruncate(self.fd, 0)  # a stale pid would mislead nobody, but an empty file says "free"
            except OSError:
                pass
            os.close(self.fd)
            self.fd = -1
