"""StopFailure: a turn an API error ended is counted in the job's figures, shown by `baton status`
and told by the next brief until progress is recorded; the hook answers nothing and blocks nothing."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict

from conftest import REPO, Hook, JobDir, Payloads

from store.cli import dashboard, views
from store.monitor.limits import job_news
from store.state.job import Job

OVERLOADED = "API Error: 529 Overloaded"


def status(job: JobDir) -> Dict[str, Any]:
    return views.status_data(Job(job.layout, {}), [])


def brief(job: JobDir) -> str:
    loaded = Job(job.layout, {})
    return loaded.brief("", job_news(loaded))


def test_a_turn_ended_by_an_api_error_is_counted_shown_and_told_once_to_the_next_brief(
        hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    job.record("a", "done", "first")

    result = hook("StopFailure", payload("stop_failure"))

    assert (result.code, result.out) == (0, "")
    [event] = [e for e in job.events() if e.get("kind") == "api_error"]
    assert (event["error"], event["step"], event["via"]) == ("server_error", "b", "StopFailure")
    assert event["detail"] == OVERLOADED  # the first sentence: Claude Code's advice after it is dropped
    data = status(job)
    assert data["api_errors"]["turns"] == 1
    last = data["api_errors"]["last"]
    assert (last["error"], last["step"], last["detail"]) == ("server_error", "b", OVERLOADED)
    assert last["ts"] and last["session"] == event["session"]
    shown = dashboard.render(data, colour=False)
    assert "\napi    1 turn ended on an API error; last" in shown
    assert f"in b: server_error: {OVERLOADED}" in " ".join(shown.split())  # the line wraps at 80 columns
    line = [ln for ln in brief(job).splitlines() if ln.startswith("API ERROR:")]
    assert len(line) == 1 and line[0].startswith(
        f"API ERROR: the last turn on b ended on an API error (server_error: {OVERLOADED}) at {last['ts']}, "
        "1 in this job: its last action may be unfinished, check it before redoing it"), line

    hook("StopFailure", payload("stop_failure", error="rate_limit", last_assistant_message="API Error: 429 slow."))
    assert status(job)["api_errors"]["turns"] == 2
    assert "(rate_limit: API Error: 429 slow) at " in brief(job) and ", 2 in this job:" in brief(job)

    job.record("b", "done", "made it after all")  # progress: the news is old
    assert "API ERROR" not in brief(job)
    assert status(job)["api_errors"]["turns"] == 2  # the figure stays


def test_a_stop_failure_with_no_step_left_is_counted_but_not_news(hook: Hook, job: JobDir,
                                                                   payload: Payloads) -> None:
    job.plan(["a"])
    job.record("a", "done", "all of it")
    hook("StopFailure", payload("stop_failure"))
    assert status(job)["api_errors"]["turns"] == 1
    assert "API ERROR" not in brief(job)


def test_a_hook_that_cannot_write_lets_the_turn_end_and_says_why_later(
        hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a"])
    (job.state / "hooks.lock").mkdir()  # the lock cannot be opened: the note fails
    result = hook("StopFailure", payload("stop_failure"), stderr_ok=True)
    assert (result.code, result.out) == (0, "")  # nothing that blocks, whatever failed
    assert "DEGRADED" in brief(job)


def test_baton_brief_in_a_terminal_shows_the_line(job: JobDir, hook: Hook, payload: Payloads) -> None:
    job.plan(["a", "b"])
    hook("StopFailure", payload("stop_failure"))
    shown = subprocess.run([sys.executable, str(REPO / "bin" / "baton"), "brief"], cwd=job.project,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "API ERROR: the last turn on a" in shown.stdout
