"""What ``baton run`` shows while it works: a line per event, a live status line on a terminal, or JSON.

Plain lines go to the stream whatever it is; on a terminal one more line at the bottom is redrawn in
place (at most twice a second) with the session, its age and the cost so far, and cleared before
each plain line. ``--json`` prints every event but the status ticks as one JSON object per line.
"""

from __future__ import annotations

import shutil
import time

from store.base import jsonc
from store.base.text import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, TextIO

REDRAW = 0.5


def duration(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def money(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, (int, float)) else "$?"


def _start(e: Dict[str, Any]) -> str:
    nxt = f", NEXT {one_line(str(e['next']), 60)}" if e.get("next") else ""
    return f"baton run (pid {e['pid']}): job {one_line(str(e['job']), 60)}, {e['done']} of {e['total']} steps done{nxt}"


def _session_start(e: Dict[str, Any]) -> str:
    extra = [f"resuming {str(e['resume'])[:8]}"] if e.get("resume") else []
    extra += [f"--max-turns {e['max_turns']}"] if e.get("max_turns") is not None else []
    extra += [f"--max-budget-usd {e['max_budget_usd']:.4f}"] if e.get("max_budget_usd") is not None else []
    extra += [f"--task-budget {e['task_budget']}"] if e.get("task_budget") is not None else []
    on = f" on {one_line(str(e['next']), 60)}" if e.get("next") else ""
    return f"session {e['session']}: claude started (pid {e['pid']}){on}" + (f" [{', '.join(extra)}]" if extra else "")


def _api_retry(e: Dict[str, Any]) -> str:
    return (f"session {e['session']}: Claude Code retries an API error ({e.get('status') or 'network'} "
            f"{e.get('error', '')}) in {duration(e.get('delay_s') or 0)}, attempt {e.get('attempt')} of "
            f"{e.get('max_retries')}")


def _session_end(e: Dict[str, Any]) -> str:
    figures = [f"{e['turns']} turns"] if e.get("turns") is not None else []
    figures += [money(e["cost_usd"])] if e.get("cost_usd") is not None else []
    detail = f": {one_line(str(e['detail']), 160)}" if e.get("detail") else ""
    done = [one_line(r, 60) for r in e.get("recorded") or []]
    recorded = "recorded " + ", ".join(done) if done else "nothing recorded"
    nxt = f"NEXT {one_line(str(e['next']), 60)}" if e.get("next") else "all steps complete"
    return (f"session {e['session']} ended: {e['ended']}" + (f" ({', '.join(figures)})" if figures else "")
            + f"{detail}; {recorded}; {nxt}; {money(e.get('run_cost_usd'))} this run")


def _wait(e: Dict[str, Any]) -> str:
    if e.get("after") == "nothing_ready":  # a parallel plan: other workers hold every ready step
        return f"waiting {duration(e['seconds'])} for a ready step: {e['detail']}"
    because = f" (retry-after {duration(e['retry_after'])})" if e.get("retry_after") else ""
    return (f"waiting {duration(e['seconds'])} before the next session: {e['after']} "
            f"{e['failures']} time(s) in a row{because}")


def _stop(e: Dict[str, Any]) -> str:
    spent = f"{e['sessions']} session(s), {money(e['cost_usd'])}, {duration(e['seconds'])}"
    if e["outcome"] == "done":
        return f"done: all {e['total']} steps complete; {spent}"
    return (f"stopped ({e['outcome']}, exit {e['exit_code']}): {e['message']}\n"
            f"{e['done']} of {e['total']} steps done; {spent}")


def _notify(e: Dict[str, Any]) -> str:
    code = e.get("exit_code")
    return f"notify: `{one_line(str(e['command']), 80)}` " + ("could not run" if code is None else f"exited {code}")


def _warning(e: Dict[str, Any]) -> str:
    return f"warning: {one_line(str(e.get('message', '')), 200)}"


LINES: Dict[str, Callable[[Dict[str, Any]], str]] = {
    "start": _start, "session_start": _session_start, "api_retry": _api_retry, "session_end": _session_end,
    "wait": _wait, "stop": _stop, "notify": _notify, "warning": _warning,
    "leftover": lambda e: f"session {e['session']}: {e['detail']}",
}


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


class Reporter:
    """Called with each event of a run; writes it to ``stream`` as text or JSON."""

    def __init__(self, stream: TextIO, as_json: bool = False, live: Optional[bool] = None) -> None:
        self.stream, self.as_json = stream, as_json
        self.live = (not as_json and _is_terminal(stream)) if live is None else live
        self.drawn = False
        self.last_draw = float("-inf")
        self.run_cost = 0.0

    def __call__(self, event: Dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "session_end" and isinstance(event.get("run_cost_usd"), (int, float)):
            self.run_cost = float(event["run_cost_usd"])
        if self.as_json:
            if kind != "status":
                stamped = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}
                self._write(jsonc.dumps(stamped, separators=(",", ":"), default=str) + "\n")
            return
        if kind == "status":
            if self.live:
                self._draw(event)
            return
        render = LINES.get(str(kind))
        if render is not None:
            self._clear()
            self._write(render(event) + "\n")

    def _status_text(self, e: Dict[str, Any]) -> str:
        if e.get("waiting") is not None:
            return f"  waiting {duration(e['waiting'])} before session {e['session'] + 1}"
        return (f"  session {e['session']} running {duration(e.get('seconds', 0))}, {e.get('messages', 0)} messages, "
                f"{money(self.run_cost)} this run")

    def _draw(self, e: Dict[str, Any]) -> None:
        now = time.monotonic()
        if now - self.last_draw < REDRAW:
            return
        self.last_draw = now
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        self._write("\r\x1b[2K" + self._status_text(e)[:width])
        self.drawn = True

    def _clear(self) -> None:
        if self.drawn:
            self._write("\r\x1b[2K")
            self.drawn = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            pass  # a reader that went away must not stop the run
