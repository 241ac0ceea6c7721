"""Durable file primitives: atomic replace, whole-line appends and an inter-process lock.

``fcntl.flock`` is used where it exists. Where it does not (Windows) the lock is a no-op and
baton is safe for one writer at a time; everything else works the same.
"""

from __future__ import annotations

import os

try:  # pragma: no cover - the import is what differs between platforms
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

HAVE_LOCKS = fcntl is not None

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Union


class locked:  # noqa: N801 - used as a function: ``with locked(path):``
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` block."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path, self.fd = path, -1

    def __enter__(self) -> None:
        self.fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(self.fd)
                raise

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing the descriptor releases the flock


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(str(folder), os.O_RDONLY)
    except OSError:  # pragma: no cover - directories cannot be opened on Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def held(path: Union[str, Path]) -> bool:
    """Whether some process holds the :class:`locked` lock on ``path`` now (never waits; the file
    is created if missing, and an ``OSError`` opening it is raised). False where there are no locks."""
    if not HAVE_LOCKS:  # pragma: no cover - Windows
        return False
    fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing also drops the lock if this call took it
    return False


def named(exc: BaseException, path: Union[str, Path]) -> None:
    """Give an ``OSError`` raised on an open file (a write, flush or fsync: disk full) the file's
    name, which Python leaves out, so the person is told where (``disk full: /p/.baton/x``)."""
    if isinstance(exc, OSError) and exc.filename is None:
        exc.filename = os.fspath(path)


def atomic_write(path: Union[str, Path], data: bytes, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    Temp file in the same directory, write, flush (and fsync when ``sync``), ``os.replace``,
    fsync the directory. On error the temp file is removed and the original error re-raised.
    """
    folder, name = os.path.split(os.fspath(path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        named(exc, path)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync:
        _fsync_dir(folder or ".")


def append_line(path: Union[str, Path], line: bytes, sync: bool = True, rollback: bool = False) -> int:
    """Append one complete line in a single ``write`` call; return the file size after it.

    With ``rollback`` (the caller holds the file's lock), a write or fsync that fails part way
    (disk full) truncates the file back to its size before, so no torn line is left behind."""
    fd = os.open(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        before = os.fstat(fd).st_size if rollback else -1
        try:
            view = memoryview(line)
            while view:  # a short write is finished here, so no other writer can slip in (we hold the lock)
                written = os.write(fd, view)
                view = view[written:]
            if sync:
                os.fsync(fd)
        except BaseException as exc:
            named(exc, path)
            if before >= 0:
                try:
                    os.ftruncate(fd, before)
                except OSError:
                    pass  # the reader's torn-tail repair is the fallback
            raise
        return os.fstat(fd).st_size
    finally:
        os.close(fd)
