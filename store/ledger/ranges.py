"""Doing pieces of one job at once in forked workers, the first piece here, each answer back in order.

Where the platform forks, each piece after the first is done in a child process that sends its
answer (bytes) back through a pipe, while this process does the first. A piece whose worker could
not be started or failed answers ``None``, and the caller does it itself: the answers are the same
either way, only slower. A worker checks between steps that the process that started it lives
(:func:`stop_if_abandoned`), so a killed parent leaves no worker running; workers still running
when the caller stops reading answers are killed and reaped.
"""

from __future__ import annotations

import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Generator, List, Optional, Sequence, Tuple, TypeVar

    Piece = TypeVar("Piece")

_PARENT = [0]  # in a worker, the pid of the process that started it; 0 elsewhere


def processors() -> int:
    """How many processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def stop_if_abandoned() -> None:
    """In a worker whose parent has gone (killed, its pipe closed), exit at once; elsewhere nothing."""
    if _PARENT[0] and os.getppid() != _PARENT[0]:
        os._exit(1)


def _start(work: Callable[[Piece], bytes], piece: Piece, others: List[Tuple[int, int]]) -> Tuple[int, int]:
    """(pid, the pipe's read end) of a worker doing ``piece``, or (0, -1) when none can be started."""
    parent = os.getpid()
    try:
        reader, writer = os.pipe()
    except OSError:
        return 0, -1
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return 0, -1
    if pid == 0:  # pragma: no cover - a worker's work is checked through its answer
        code = 1
        try:
            _PARENT[0] = parent
            os.close(reader)
            for _, fd in others:
                if fd >= 0:  # -1: a worker that could not start
                    os.close(fd)
            view = memoryview(work(piece))
            while view:
                view = view[os.write(writer, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    return pid, reader


def _collect(pid: int, reader: int) -> Optional[bytes]:
    chunks = []
    with os.fdopen(reader, "rb") as pipe:
        while True:
            data = pipe.read()
            if not data:
                break
            chunks.append(data)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if status == 0 and chunks else None


def answers(work: Callable[[Piece], bytes], pieces: Sequence[Piece], fork: bool = True) \
        -> Generator[Optional[bytes], None, None]:
    """``work(piece)`` for each piece in order: the first done here, the others in workers at the same
    time (``None`` for a piece no worker did). Closing the iterator early kills the workers left."""
    workers: List[Tuple[int, int]] = []
    try:
        if fork and hasattr(os, "fork"):
            for piece in pieces[1:]:
                workers.append(_start(work, piece, workers))
        else:
            workers = [(0, -1)] * (len(pieces) - 1)
        if pieces:
            yield work(pieces[0])
        while workers:
            pid, reader = workers[0]
            workers[0] = (0, -1)
            answer = _collect(pid, reader) if pid else None
            workers.pop(0)
            yield answer
    finally:
        for pid, reader in workers:
            if pid:
                os.kill(pid, signal.SIGKILL)
                os.close(reader)
                os.waitpid(pid, 0)
