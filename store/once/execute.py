"""Running the command of ``baton once``: an argv with no shell, its output streamed through as it
comes and captured (SHA-256, tails, the start of stdout for an id), SIGINT, SIGTERM and SIGHUP
forwarded, and an outcome that says whether the command finished by itself.

The key's lock descriptor is inherited by the command, so while any process it started still
runs, no other ``baton once`` of the key can begin, even after this process was killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from hashlib import sha256

from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, BinaryIO, Dict, List, Mapping, Optional, Sequence

OUT_TAIL = 500  # characters of stdout kept on the result record
ERR_TAIL = 300
HEAD = 1024 * 1024  # bytes of stdout kept in memory for --id-from / --id-json
DRAIN_SECONDS = 2.0  # after the command exits, how long to wait for output its own children still write
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP")


class Outcome(Frozen):
    __slots__ = ("exit", "signal", "seconds", "sha256", "tail", "err_tail", "head", "interrupted")

    def __init__(self, exit: Optional[int], signal: int, seconds: float, sha256: str, tail: str, err_tail: str,
                 head: bytes, interrupted: int) -> None:
        self.exit, self.signal, self.seconds = exit, signal, seconds  # exit None: ended by ``signal``
        self.sha256, self.tail, self.err_tail, self.head = sha256, tail, err_tail, head
        self.interrupted = interrupted  # a signal this process received and forwarded (0: none)

    @property
    def finished(self) -> bool:
        """The command exited by itself: its exit code is its outcome. Ended by a signal, the side
        effect may be half done, so nothing is recorded as its result."""
        return self.exit is not None


class _Copy:
    """Copies one pipe to one of our streams while keeping what the record needs."""

    def __init__(self, source: IO[bytes], sink: BinaryIO, keep_head: bool, tail: int) -> None:
        self.source, self.sink, self.keep_head, self.tail_size = source, sink, keep_head, tail
        self.digest, self.head, self.tail, self.echo = sha256(), bytearray(), b"", True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        fd = self.source.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.digest.update(chunk)
            if self.keep_head and len(self.head) < HEAD:
                self.head += chunk[: HEAD - len(self.head)]
            self.tail = (self.tail + chunk)[-4 * self.tail_size:]
            if self.echo:
                try:
                    self.sink.write(chunk)
                    self.sink.flush()
                except (OSError, ValueError):
                    self.echo = False  # our reader went away; keep capturing

    def text_tail(self) -> str:
        text = self.tail.decode("utf-8", "replace")
        return text[-self.tail_size:]


def _terminal_delivered(signum: int) -> bool:
    """True when ``signum`` most likely came from our terminal, which sends it to our whole
    foreground process group, the command included: forwarding it would deliver it twice."""
    terminal = [getattr(signal, name, None) for name in ("SIGINT", "SIGHUP")]
    foreground = getattr(os, "tcgetpgrp", None)  # not on Windows
    if signum not in terminal or foreground is None:
        return False
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                return bool(foreground(fd) == os.getpgrp())
        except OSError:
            continue
    return False


def _forwarding(procs: List[subprocess.Popen[bytes]], received: List[int]) -> Dict[int, Any]:
    """Install handlers that pass our signals on to the command (started later, into ``procs``)."""

    def forward(signum: int, frame: Any) -> None:
        received.append(signum)
        if procs and not _terminal_delivered(signum):
            try:
                procs[0].send_signal(signum)
            except (ProcessLookupError, OSError):
                pass

    previous = {}
    for name in FORWARDED:
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, forward)
    return previous


def run(argv: Sequence[str], env: Mapping[str, str], cwd: str, keep_fd: int = -1) -> Outcome:
    """Run ``argv`` to its end; raises ``OSError`` only when it cannot start."""
    started = time.monotonic()
    keep = (keep_fd,) if keep_fd >= 0 and os.name == "posix" else ()
    procs: List[subprocess.Popen[bytes]] = []
    received: List[int] = []
    previous = _forwarding(procs, received)  # before the start: a signal meanwhile is not lost
    try:
        proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=keep)
        procs.append(proc)
        for signum in received:
            if not _terminal_delivered(signum):
                proc.send_signal(signum)
        assert proc.stdout is not None and proc.stderr is not None
        out = _Copy(proc.stdout, sys.stdout.buffer, True, OUT_TAIL)
        err = _Copy(proc.stderr, sys.stderr.buffer, False, ERR_TAIL)
        code = proc.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    for copy in (out, err):
        copy.thread.join(DRAIN_SECONDS)  # a child the command left behind may hold the pipe open
    seconds = round(time.monotonic() - started, 3)
    return Outcome(code if code >= 0 else None, -code if code < 0 else 0, seconds, out.digest.hexdigest(),
                   out.text_tail(), err.text_tail(), bytes(out.head), received[0] if received else 0)
