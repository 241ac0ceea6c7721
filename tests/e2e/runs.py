"""`baton run` started as a person starts it, with `--json` so a test can follow its events.

`start_run()` runs the plugin copy's `bin/baton run` in the project with the pinned CLI, the copy as
`--plugin-dir`, short waits, the permission flags the other end-to-end tests give Claude Code
after `--`, and the test driver's environment (throwaway HOME, the scripted API,
the tag that finds every process it starts). `BatonRun` collects the events as they arrive, waits
for one, sends signals and collects the outcome.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .driver import DEFAULT_ARGS, Claude

FAST = ("--first-wait", "0.1", "--max-wait", "5")
Event = dict[str, Any]


class BatonRun:
    """A running `baton run --json`: its events so far, and a way to wait for more."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.events: list[Event] = []
        self.others: list[str] = []  # stdout lines that are not JSON (there should be none)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(proc.stderr or []), daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout or []:
            self._lines.put(line)
        self._lines.put(None)

    def _take(self, timeout: float) -> bool:
        """Move one line into `events`; False at the end of output."""
        line = self._lines.get(timeout=timeout)
        if line is None:
            self._lines.put(None)
            return False
        try:
            self.events.append(json.loads(line))
        except ValueError:
            self.others.append(line)
        return True

    def wait_for(self, wanted: Callable[[Event], bool], timeout: float = 60) -> Event:
        """The first event (seen before or arriving within `timeout`) for which `wanted` holds."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if wanted(event):
                    return event
            seen = len(self.events)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no such event within {timeout}s; events: {self.events}")
            try:
                if not self._take(min(left, 0.5)):
                    raise AssertionError(f"baton run ended without such an event; events: {self.events}; "
                                         f"stderr: {self.stderr}")
            except queue.Empty:
                continue

    def finish(self, timeout: float = 120) -> int:
        """Wait for the exit (killing it after `timeout`) and read every remaining event."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"baton run did not end within {timeout}s; events: {self.events}") from None
        while self._take(timeout=10):
            pass
        return code

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.get("event") == kind]


def start_run(claude: Claude, plugin: Path, project: Path, *args: str, env: Mapping[str, str] | None = None,
              claude_args: Sequence[str] = ()) -> BatonRun:
    """`python3 <plugin>/bin/baton run --claude <pinned CLI> --plugin-dir <plugin> --json ... ARGS -- <the
    permission flags every test run gives Claude Code> CLAUDE_ARGS`."""
    argv = [sys.executable, str(plugin / "bin" / "baton"), "run", "--claude", str(claude.exe),
            "--plugin-dir", str(plugin), "--json", *FAST, *args, "--", *DEFAULT_ARGS, *claude_args]
    proc = subprocess.Popen(argv, cwd=project, env=claude.env(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return BatonRun(proc)


def run_to_end(claude: Claude, plugin: Path, project: Path, *args: str, env: Mapping[str, str] | None = None,
               claude_args: Sequence[str] = (), timeout: float = 180) -> tuple[int, BatonRun]:
    run = start_run(claude, plugin, project, *args, env=env, claude_args=claude_args)
    return run.finish(timeout), run


def live_commands(pids: list[int]) -> list[str]:
    """The command lines of `pids` still alive (for messages and for finding a process)."""
    out = []
    for pid in pids:
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return out


def wait_for_process(claude: Claude, needle: str, timeout: float = 60) -> int:
    """The pid of a process of this test's runs whose command line contains `needle`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in claude.live_pids():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle in cmdline and os.path.basename(cmdline.split(" ")[0]).startswith("python"):
                return pid
        time.sleep(0.1)
    raise AssertionError(f"no process with {needle!r} within {timeout}s")
