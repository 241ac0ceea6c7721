"""One ``baton once`` of a key at a time: an exclusive ``flock`` on ``.baton/once/locks/<digest>``.

The command that ``baton once`` runs inherits the descriptor, so the key stays locked while
anything it started still runs, even after ``baton once`` itself was killed. The holder removes
the file when the key has its result for good; a waiter that wakes on a removed file locks the
new one instead. Where ``fcntl`` does not exist (Windows) there is no lock: one at a time.
"""

from __future__ import annotations

import os

from store.base import durable
from store.state import snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Callable, Optional

    from store.state.location import Layout

try:  # pragma: no cover - platform difference
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


def make_folders(layout: Layout) -> Path:
    """``.baton/once/`` (the index shards) and ``.baton/once/locks/``, ignored by git; returns the first."""
    where = layout.root / "once"
    if not (where / "locks").is_dir():
        (where / "locks").mkdir(parents=True, exist_ok=True)
        durable.atomic_write(where / ".gitignore", b"# derived from steps.jsonl: rebuildable\n*\n", sync=False)
    return where


def path_of(layout: Layout, key: str) -> str:
    return str(layout.root / "once" / "locks" / snapshot.key_digest(key))


class KeyLock:
    """An exclusive ``flock`` on the key's lock file. A lock file removed by its holder (when the
    key has a result for good) is detected after locking, and the lock is taken again."""

    def __init__(self, layout: Layout, key: str) -> None:
        self.path, self.layout, self.fd = path_of(layout, key), layout, -1

    def acquire(self, wait: bool = True, on_wait: Optional[Callable[[], None]] = None) -> bool:
        make_folders(self.layout)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not self._lock(fd, wait, on_wait):
                    os.close(fd)
                    return False
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            except BaseException:
                os.close(fd)
                raise
            if same:
                self.fd = fd
                return True
            os.close(fd)  # its holder removed the file: lock the new one

    @staticmethod
    def _lock(fd: int, wait: bool, on_wait: Optional[Callable[[], None]]) -> bool:
        if not durable.HAVE_LOCKS:  # pragma: no cover - Windows: one `baton once` at a time
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if not wait:
                return False
        if on_wait is not None:
            on_wait()
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True

    def release(self, remove: bool = False) -> None:
        if self.fd < 0:
            return
        if remove:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self.fd)
        self.fd = -1


def busy(layout: Layout, key: str) -> bool:
    """True while a ``baton once`` of ``key`` (or the command it started) still runs."""
    if not durable.HAVE_LOCKS:  # pragma: no cover
        return False
    try:
        fd = os.open(path_of(layout, key), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
