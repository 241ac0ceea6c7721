"""What `baton run` prints: a line per event, a status line redrawn in place on a terminal, or JSON."""

from __future__ import annotations

import io
import json
from typing import Any, Dict, List

import pytest

from store.cli import progress
from store.cli.progress import Reporter

EVENTS: List[Dict[str, Any]] = [
    {"event": "start", "pid": 42, "job": "port", "project": "/p", "done": 1, "total": 3, "next": "b"},
    {"event": "session_start", "session": 1, "pid": 43, "next": "b", "resume": None, "max_turns": 7,
     "max_budget_usd": 0.5, "argv": ["claude", "-p", "go"]},
    {"event": "session_id", "session": 1, "session_id": "5c1f09aa-1111"},
    {"event": "status", "session": 1, "seconds": 3.0, "messages": 2},
    {"event": "api_retry", "session": 1, "attempt": 1, "max_retries": 10, "status": 529, "error": "overloaded",
     "delay_s": 0.6},
    {"event": "session_end", "session": 1, "session_id": "5c1f09aa-1111", "ended": "api_error",
     "detail": "529 overloaded_error: API Error: 529 Overloaded.", "exit_code": 1, "cost_usd": 0.0, "turns": 1,
     "recorded": [], "next": "b", "run_cost_usd": 0.0},
    {"event": "wait", "seconds": 14.2, "after": "api_error", "detail": "", "failures": 1, "retry_after": None},
    {"event": "status", "session": 1, "waiting": 10.0},
    {"event": "session_start", "session": 2, "pid": 44, "next": "b", "resume": "5c1f09aa-1111", "max_turns": None,
     "max_budget_usd": None, "argv": []},
    {"event": "session_end", "session": 2, "session_id": "5c1f09aa-1111", "ended": "completed", "detail": "",
     "exit_code": 0, "cost_usd": 0.0123, "turns": 9, "recorded": ["b done", "c done"], "next": None,
     "run_cost_usd": 0.0123},
    {"event": "stop", "outcome": "done", "exit_code": 0, "message": "all steps complete", "next": None, "done": 3,
     "total": 3, "sessions": 2, "cost_usd": 0.0123, "seconds": 75.5},
    {"event": "notify", "command": "notify-send baton", "exit_code": 0},
]
PLAIN = """\
baton run (pid 42): job port, 1 of 3 steps done, NEXT b
session 1: claude started (pid 43) on b [--max-turns 7, --max-budget-usd 0.5000]
session 1: Claude Code retries an API error (529 overloaded) in 0.6 s, attempt 1 of 10
session 1 ended: api_error (1 turns, $0.0000): 529 overloaded_error: API Error: 529 Overloaded.; nothing recorded; \
NEXT b; $0.0000 this run
waiting 14.2 s before the next session: api_error 1 time(s) in a row
session 2: claude started (pid 44) on b [resuming 5c1f09aa]
session 2 ended: completed (9 turns, $0.0123); recorded b done, c done; all steps complete; $0.0123 this run
done: all 3 steps complete; 2 session(s), $0.0123, 1m15s
notify: `notify-send baton` exited 0
"""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_one_per_event_and_no_status_line() -> None:
    out = io.StringIO()
    reporter = Reporter(out)
    for event in EVENTS:
        reporter(event)
    assert out.getvalue() == PLAIN


def test_json_is_one_event_per_line_without_status_ticks() -> None:
    out = Terminal()
    reporter = Reporter(out, as_json=True)
    for event in EVENTS:
        reporter(event)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [{k: v for k, v in e.items() if k != "ts"} for e in lines] == [e for e in EVENTS if e["event"] != "status"]
    assert all(e["ts"].endswith("Z") for e in lines)


def test_on_a_terminal_the_status_line_is_redrawn_and_cleared_before_each_line(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(float(n) for n in range(100))
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    out = Terminal()
    reporter = Reporter(out)
    assert reporter.live
    for event in EVENTS:
        reporter(event)
    text = out.getvalue()
    assert "\r\x1b[2K  session 1 running 3.0 s, 2 messages, $0.0000 this run\r\x1b[2Ksession 1: Claude Code" in text
    assert "\r\x1b[2K  waiting 10.0 s before session 2\r\x1b[2Ksession 2: claude started" in text
    assert text.replace("\r\x1b[2K", "").replace("  session 1 running 3.0 s, 2 messages, $0.0000 this run", "") \
        .replace("  waiting 10.0 s before session 2", "") == PLAIN


def test_a_stop_for_a_person_shows_the_outcome_code_and_message() -> None:
    out = io.StringIO()
    Reporter(out)({"event": "stop", "outcome": "approval", "exit_code": 3, "next": "b", "done": 1, "total": 2,
                   "sessions": 1, "cost_usd": 0.5, "seconds": 3600.0,
                   "message": "waiting for a person's approval of b.\n  approve:  claude -p '/baton:approve b'"})
    assert out.getvalue() == ("stopped (approval, exit 3): waiting for a person's approval of b.\n"
                              "  approve:  claude -p '/baton:approve b'\n"
                              "1 of 2 steps done; 1 session(s), $0.5000, 1h00m00s\n")


def test_a_closed_stream_does_not_stop_the_run() -> None:
    out = io.StringIO()
    out.close()
    Reporter(out)(EVENTS[0])
