"""One supervised Claude Code session: start it, follow its stream, pass signals on, classify its end.

A signal that reaches ``baton run`` (SIGINT, SIGTERM, SIGHUP) is forwarded to the session's process
group at once; a second one, or a session still running ``grace`` seconds later, gets SIGKILL. The
session ends when its output ends, or :data:`DRAIN` seconds after Claude Code exits when a process it
left behind (in a group of its own) still holds the output open: that process is ended then. A
session whose init line shows that the baton plugin is not loaded is stopped before it costs more.
"""

from __future__ import annotations

import queue
import signal
import time

from store.base.text import one_line
from store.run import orphans
from store.run.child import EOF, Child
from store.run.stream import Ending, Report, classify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

    Emit = Callable[[Dict[str, Any]], None]

PLUGIN = "baton"
TICK = 0.25
DRAIN = 2.0  # seconds to wait for the end of the output once Claude Code has exited
LEFTOVER = ("Claude Code exited but a process it left behind still held its output; that process was "
            "ended")


class Watch:
    """The signal state a run shares with its current session (set from the signal handler)."""

    def __init__(self) -> None:
        self.signal = 0
        self.signal_at = 0.0
        self.child: Optional[Child] = None

    def on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        first = not self.signal
        if first:
            self.signal, self.signal_at = signum, time.monotonic()
        child = self.child
        if child is not None:
            child.signal(signum if first else signal.SIGKILL)  # a second Ctrl-C means now

    def caught(self) -> bool:
        """Whether a signal asked the run to stop (a method: the handler changes it behind our back)."""
        return bool(self.signal)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signal).name if self.signal else ""


def _no_plugin(report: Report) -> Ending:
    errors = "; ".join(report.plugin_errors[:2])
    return Ending("no_plugin", "Claude Code did not load the baton plugin" + (f" ({errors})" if errors else ""))


def run(number: int, argv: Sequence[str], cwd: str, env: Mapping[str, str], watch: Watch, emit: Emit,
        grace: float, facts: Mapping[str, Any]) -> Tuple[Report, Ending]:
    """Run one session to its end; ``emit`` gets its start (with ``facts``), its news (session id, API
    retries) and status ticks."""
    child = Child(argv, cwd, env)
    watch.child = child
    if watch.signal:  # arrived between the run's last check and the start
        child.signal(watch.signal)
    emit({"event": "session_start", "session": number, "pid": child.pid, **facts, "argv": list(argv)})
    report, missing = Report(), False
    started = time.monotonic()
    try:
        while True:
            try:
                line = child.next_line(TICK)
            except queue.Empty:
                line = ""
            if line is EOF:
                break
            if child.exited_holding_pipe(DRAIN):
                emit({"event": "leftover", "session": number, "detail": LEFTOVER})
                orphans.sweep()  # the holder is a descendant, re-parented to this subreaper: end it
                break
            news = report.feed(line) if line else None
            if news is not None and news.get("subtype") == "init":
                emit({"event": "session_id", "session": number, "session_id": report.session_id})
                if report.plugins is not None and PLUGIN not in report.plugins:
                    missing = True
                    child.signal(signal.SIGTERM)
            elif news is not None:
                emit({"event": "api_retry", "session": number, "attempt": news.get("attempt"),
                      "max_retries": news.get("max_retries"), "status": news.get("error_status"),
                      "error": one_line(str(news.get("error") or ""), 80), "delay_s": report.retry_delay})
            emit({"event": "status", "session": number, "seconds": time.monotonic() - started,
                  "messages": report.assistant_messages})
            if watch.signal and time.monotonic() - watch.signal_at > grace:
                child.signal(signal.SIGKILL)
                if time.monotonic() - watch.signal_at > 2 * grace:
                    break  # whatever still holds the output, the person asked to stop: finish() ends it
    finally:
        code = child.finish(grace)
        watch.child = None
    if missing:
        return report, _no_plugin(report)
    forwarded = watch.signal if child.signalled else 0
    return report, classify(report, code, forwarded, child.stderr_tail())
