"""One Claude Code process: started in a process group of its own, its output read line by line.

Two reader threads drain stdout (into a queue of lines) and stderr (the last lines kept for an
error message), so a process that writes a lot never blocks on a full pipe, and the supervisor's
main thread stays free to handle signals and redraw its status line. :meth:`Child.signal` reaches
the whole group; :meth:`Child.finish` waits, escalating to SIGKILL after a grace period.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import subprocess
import threading
import time

from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Deque, List, Mapping, Optional, Sequence

STDERR_LINES = 20
EOF = None


class Child:
    """A started process; ``lines`` yields its stdout lines, then ``EOF`` (None)."""

    def __init__(self, argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> None:
        try:
            self.proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise BatonError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        self.lines: queue.Queue[Optional[str]] = queue.Queue()
        self.stderr: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.signalled = 0  # the first signal sent to the group (0: none)
        self.exited_at: Optional[float] = None  # when the process was seen gone (monotonic)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers: List[threading.Thread] = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump(self, stream: IO[bytes], to_queue: bool) -> None:
        try:
            for raw in stream:
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if to_queue:
                    self.lines.put(text)
                elif text.strip():
                    self.stderr.append(text)
        except (OSError, ValueError):
            pass  # the pipe went away with the process
        finally:
            if to_queue:
                self.lines.put(EOF)

    def next_line(self, timeout: float) -> Optional[str]:
        """The next stdout line, ``EOF`` at the end; raises ``queue.Empty`` after ``timeout`` seconds."""
        return self.lines.get(timeout=timeout)

    def exited_holding_pipe(self, drain: float) -> bool:
        """True once the process has exited and its output has not ended ``drain`` seconds later: a
        process it left behind holds the pipe (the readers would wait for it forever)."""
        if self.exited_at is None:
            if self.proc.poll() is None:
                return False
            self.exited_at = time.monotonic()
        return time.monotonic() - self.exited_at >= drain

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process's group, unless the process has been reaped already."""
        if self.proc.returncode is not None:
            return
        self.signalled = self.signalled or sig
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def finish(self, grace: float) -> int:
        """Wait for the exit (SIGKILL to the group after ``grace`` seconds); the exit code."""
        deadline = time.monotonic() + grace
        while True:
            try:
                code = self.proc.wait(timeout=max(0.05, min(0.5, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    self.signal(signal.SIGKILL)
                    deadline = time.monotonic() + 60.0
        for reader in self._readers:
            reader.join(timeout=5.0)  # a grandchild holding the pipe open must not hang us
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code

    def stderr_tail(self) -> str:
        return self.stderr[-1] if self.stderr else ""
