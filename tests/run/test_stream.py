"""Reading Claude Code's stream-json and naming how a session ended, from output of the real CLI.

The fixtures are the init, api_retry and result lines that Claude Code 2.1.328 printed against the
scripted API (paths replaced), and ``exit_codes.json`` holds the exit code of each run.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Dict

import pytest

from store.run.stream import ENDINGS, Report, classify, refused_calls, transient

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXIT_CODES: Dict[str, int] = json.loads((FIXTURES / "exit_codes.json").read_text())


def report_of(name: str) -> Report:
    report = Report()
    for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines():
        report.feed(line)
    return report


@pytest.mark.parametrize("name, ended, is_transient", [
    ("completed", "completed", False),
    ("overloaded", "api_error", True),
    ("dropped", "api_error", True),
    ("max_turns", "turn_cap", False),
    ("budget", "budget", False),
])
def test_each_real_ending_is_named(name: str, ended: str, is_transient: bool) -> None:
    report = report_of(name)
    ending = classify(report, EXIT_CODES[name])
    assert (ending.ended, ending.transient, ending.exit_code) == (ended, is_transient, EXIT_CODES[name])
    assert ending.ended in ENDINGS
    assert report.session_id and ending.turns is not None and ending.cost_usd is not None


def test_an_overloaded_api_says_its_status_and_the_delay_claude_code_waited() -> None:
    report = report_of("overloaded")
    ending = classify(report, 1)
    assert ending.detail == "529 overloaded_error: API Error: 529 Overloaded"
    assert report.retries == 1 and report.retry_delay == ending.retry_after == pytest.approx(0.516)


def test_a_dropped_connection_has_no_status() -> None:
    ending = classify(report_of("dropped"), 1)
    assert ending.detail == "network connection_failed: API Error: Connection dropped (ECONNRESET)"


def test_the_caps_say_which_cap_was_hit() -> None:
    assert classify(report_of("max_turns"), 1).detail == "Reached maximum number of turns (2)"
    assert classify(report_of("budget"), 1).detail == "Reached maximum budget ($0.0004)"


def test_the_init_line_lists_the_plugins() -> None:
    assert "baton" in (report_of("completed").plugins or [])
    report = report_of("no_plugin")
    assert report.plugins is not None and "baton" not in report.plugins
    assert report.plugin_errors == ["Path not found: /nonexistent"]


def test_a_session_interrupted_mid_request_prints_no_result_and_exits_0() -> None:
    report = report_of("interrupted")
    assert report.result is None and EXIT_CODES["interrupted"] == 0
    assert classify(report, 0).ended == "crashed"  # what it would look like had baton not sent the signal
    ending = classify(report, 0, interrupted=signal.SIGINT)
    assert (ending.ended, ending.detail) == ("interrupted", "stopped by SIGINT")


def test_no_result_is_a_kill_or_a_crash_with_the_last_words_on_stderr() -> None:
    killed = classify(Report(), -9, stderr_tail="bye")
    assert (killed.ended, killed.detail, killed.exit_code) == ("killed", "killed by SIGKILL: bye", -9)
    crashed = classify(Report(), 1, stderr_tail="error: unknown option '--nope'")
    assert crashed.ended == "crashed"
    assert crashed.detail == "exit code 1 without a result: error: unknown option '--nope'"


def test_garbage_lines_are_ignored() -> None:
    report = Report()
    for line in ("", "not json", "[1, 2]", '"text"', '{"type": "result"'):
        assert report.feed(line) is None
    assert report.result is None and report.session_id == ""


@pytest.mark.parametrize("status, retried", [(None, True), (429, True), (529, True), (500, True), (503, True),
                                             (408, True), (409, True), (400, False), (401, False), (403, False),
                                             (404, False), (413, False), ("529", False)])
def test_which_api_errors_are_worth_retrying(status: object, retried: bool) -> None:
    assert transient(status) is retried


def test_an_error_result_that_is_no_api_error_is_an_error() -> None:
    report = Report()
    report.feed(json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                            "terminal_reason": "aborted_tools", "errors": ["boom"], "num_turns": 3}))
    assert (classify(report, 0).ended, classify(report, 0).detail) == ("error", "boom")


def test_refused_calls_are_counted_from_the_result() -> None:
    assert refused_calls(None) == 0
    assert refused_calls({"permission_denials": [{"tool_name": "Bash"}, {"tool_name": "Write"}]}) == 2


def test_a_session_that_parked_a_call_says_which() -> None:
    """Claude Code's result when a PreToolUse hook deferred a call (store.gate.parking): success, exit 0."""
    ending = classify(report_of("parked"), EXIT_CODES["parked"])
    assert (ending.ended, ending.exit_code, ending.transient) == ("parked", 0, False)
    assert ending.parked == {"id": "toolu_0001", "tool": "Bash", "what": "Bash: echo shipped > shipped.txt"}
    assert ending.detail == "parked Bash: echo shipped > shipped.txt" and ending.cost_usd is not None
