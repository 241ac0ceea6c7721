"""A turn the API ends (529 overloaded, 500, a dropped connection) reaches the job's figures through
the real CLI's StopFailure hook, blocks nothing, and the next brief says so.

Claude Code 2.1.328 fires StopFailure when its own retries are spent (`CLAUDE_CODE_MAX_RETRIES=0`
here: at once) and does not wait for the hook: in a session that goes on (the interactive terminal,
or one CLI process fed prompt after prompt as the Agent SDK drives it) the hook runs to its end; a
`claude -p` process exits first, so `baton run` counts the error itself, once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from .driver import Claude
from .fakeapi import CUT, DROP, ApiError, FakeAPI, all_text_of, overloaded, text
from .jobstate import baton, ledger, write_plan
from .processes import tagged_gone
from .runs import run_to_end
from .streaming import Session
from .test_interactive import PROMPT, Tmux, start_tui, submit
from .test_run import record

NO_RETRIES = {"CLAUDE_CODE_MAX_RETRIES": "0"}


def status(plugin: Path, project: Path, home: Path) -> dict[str, Any]:
    shown = baton(plugin, project, home, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """The hook runs after the turn has ended: give it time to write."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.2)


def api_error_events(project: Path) -> list[dict[str, Any]]:
    path = project / ".baton" / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e.get("kind") == "api_error"]


@pytest.mark.parametrize("failure, kind, said", [
    (overloaded(), "server_error", "API Error: 529"),
    (ApiError(500, "api_error", "Internal server error"), "server_error", "API Error: 500"),
    (DROP, None, "API Error"),
], ids=["529", "500", "dropped"])
def test_an_api_error_in_a_running_session_is_counted_and_the_next_prompt_goes_on(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, failure: Any, kind: str | None, said: str,
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [failure, record("a"), [text("a is done")], [text("b waits")]]
    original = Claude.env
    claude.env = lambda extra=None: original(claude, {**NO_RETRIES, **(extra or {})})  # type: ignore[method-assign]

    with Session(claude, project, plugin_copy) as session:
        failed = session.send("Run the job.")
        assert failed["is_error"] is True and failed["terminal_reason"] == "api_error", failed
        wait_until(lambda: bool(api_error_events(project)), "the StopFailure hook's event")
        went_on = session.send("Go on.")  # the hook blocked nothing: the same session works on

    [event] = api_error_events(project)
    assert event["via"] == "StopFailure" and event["step"] == "a" and said in event["detail"]
    if kind is not None:
        assert event["error"] == kind
    assert went_on["is_error"] is False
    # the next request of the same session was told, with the prompt, that its last turn was cut off
    told = all_text_of(fake_api.requests_main()[1])
    assert "API ERROR: the last turn on a ended on an API error" in told and "may be unfinished" in told
    data = status(plugin_copy, project, claude.home)
    assert data["api_errors"]["turns"] == 1 and data["api_errors"]["last"]["step"] == "a"
    assert "API ERROR" not in baton(plugin_copy, project, claude.home, "brief").stdout  # a is recorded since


def test_a_stream_cut_in_the_middle_is_asked_again_whole_and_is_no_api_error(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    """Claude Code 2.1.328 asks again without streaming when a stream stops before its end (its own
    fallback, with CLAUDE_CODE_MAX_RETRIES=0 too): the turn goes on and nothing is counted."""
    write_plan(project, {"steps": ["a"]})
    fake_api.script = [CUT, record("a"), [text("a is done")]]

    result = claude.run("Run the job.", project, plugin_dir=plugin_copy, env=NO_RETRIES)

    assert result.output is not None and result.output["is_error"] is False, result.stdout
    streamed = [e.body.get("stream") for e in fake_api.main_entries()]
    assert streamed == [True, False, True], streamed  # the cut turn asked again, not streamed; then on as before
    assert [r["step"] for r in ledger(project) if r["status"] == "done"] == ["a"]
    assert tagged_gone(claude.tag, timeout=60)  # a hook that outlived its CLI has written by now
    assert api_error_events(project) == []


def test_an_overload_in_the_interactive_terminal_reaches_status_and_the_brief(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path,
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [overloaded()]
    original = Claude.env
    claude.env = lambda extra=None: original(claude, {**NO_RETRIES, **(extra or {})})  # type: ignore[method-assign]
    tmux = Tmux(f"baton-e2e-{claude.tag}")
    try:
        start_tui(claude, project, plugin_copy, tmp_path, tmux)
        submit(tmux, "Run the job.")
        tmux.wait_for(lambda s: "API Error: 529" in s, "the overload shown to the person")
        wait_until(lambda: bool(api_error_events(project)), "the StopFailure hook's event")
        tmux.wait_for(lambda s: PROMPT in [ln.strip() for ln in s.splitlines()] or "Resend" in s, "the prompt")
    finally:
        tmux.kill()

    data = status(plugin_copy, project, claude.home)
    assert data["api_errors"]["turns"] == 1
    last = data["api_errors"]["last"]
    assert (last["error"], last["step"]) == ("server_error", "a") and "API Error: 529 Overloaded" in last["detail"]
    shown = baton(plugin_copy, project, claude.home, "status").stdout
    assert "api    1 turn ended on an API error" in shown
    brief = baton(plugin_copy, project, claude.home, "brief").stdout
    assert "API ERROR: the last turn on a" in brief and "server_error" in brief


def test_baton_run_counts_each_api_error_once(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    fake_api.script = [overloaded(), ApiError(500, "api_error", "Internal server error"), record("a"), [text("done")]]

    code, run = run_to_end(claude, plugin_copy, project, env=NO_RETRIES)

    assert code == 0, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["api_error", "api_error", "completed"]
    assert tagged_gone(claude.tag, timeout=60)  # a StopFailure hook that outlived its CLI has written by now
    events = api_error_events(project)
    assert len(events) == 2, events  # one per failed session, whoever counted it
    assert {e["session"] for e in events} == {r["session"] for r in ledger(project)
                                              if r["status"] == "session" and r["ended"] == "api_error"}
    assert status(plugin_copy, project, claude.home)["api_errors"]["turns"] == 2
