"""`baton run` hands each session what is left of the job's budgets, and the real CLI sends it on.

The job's token limit becomes the session's `--task-budget`, which Claude Code 2.1.328 puts in every
request as `output_config.task_budget` (with the `task-budgets-2026-03-13` beta); its cost limit
becomes `--max-budget-usd`. Both shrink from one session to the next by exactly what the sessions
before spent, read from the requests the scripted API answered (each main request reports 4,000
input and 1,000 output tokens; `--max-turns 2` after `--` keeps sessions short), a killed one's included.
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from .driver import Claude
from .fakeapi import FakeAPI, LoggedRequest, text, tool_use
from .jobstate import write_plan
from .runs import run_to_end, start_run, wait_for_process
from .test_run import record, sleeper

TOKENS = 60_000
PER_REQUEST = {"input_tokens": 4000, "output_tokens": 1000}


def session_of(entry: LoggedRequest) -> str:
    """The Claude Code session a request came from (its `metadata.user_id` names it)."""
    return str(json.loads(entry.body["metadata"]["user_id"])["session_id"])


def work() -> list[dict[str, Any]]:
    return [tool_use("Bash", {"command": "echo working", "description": "work"})]


def usage(entry: LoggedRequest) -> dict[str, int]:
    return dict(PER_REQUEST) if entry.kind == "main" else {"input_tokens": 10, "output_tokens": 10}


def test_each_session_is_told_the_tokens_and_dollars_the_job_has_left(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b", "c"], "limits": {"tokens": TOKENS, "cost_usd": 5.0}})
    fake_api.usage = usage
    # The first session is killed in a tool call and the second reaches its --max-turns on one: no
    # Stop hook or SessionEnd folds their last responses, so only catching the figures up before each
    # session counts all of them.
    fake_api.script = [record("a"), sleeper(), record("b"), work(), record("c"), [text("c is done")]]
    run = start_run(claude, plugin_copy, project, claude_args=["--max-turns", "2"])
    first = run.wait_for(lambda e: e.get("event") == "session_start")
    wait_for_process(claude, "time.sleep(300)")
    os.kill(first["pid"], signal.SIGKILL)

    code = run.finish()

    assert code == 0, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["killed", "turn_cap", "completed"]
    starts = run.of("session_start")
    sessions = [e["session_id"] for e in run.of("session_id")]
    by_session = Counter(session_of(entry) for entry in fake_api.main_entries())
    spent_before = 0
    for start, sid in zip(starts, sessions):
        # what the figures counted of the sessions before: every answered main request, none missing
        assert start["task_budget"] == TOKENS - spent_before, (start, by_session)
        assert "--task-budget" in start["argv"] and str(start["task_budget"]) in start["argv"]
        spent_before += by_session[sid] * sum(PER_REQUEST.values())
    budgets = [e["task_budget"] for e in starts]
    dollars = [e["max_budget_usd"] for e in starts]
    assert budgets == sorted(budgets, reverse=True) and len(set(budgets)) == len(budgets), budgets
    # a killed session never reports its cost (it is counted as unreported, see docs/monitoring.md), so
    # only the tokens shrink after it; the dollars do after a session that ended and reported
    assert dollars[0] == dollars[1] == 5.0 and dollars[2] < 5.0, dollars

    # What the CLI sent: the session's budget in every one of its requests, with the beta that turns it on.
    told = dict(zip(sessions, budgets))
    for entry in fake_api.main_entries():
        wanted: dict[str, Any] = {"type": "tokens", "total": told[session_of(entry)]}
        assert entry.body["output_config"]["task_budget"] == wanted
        assert "task-budgets-2026-03-13" in entry.headers.get("anthropic-beta", "").split(",")


def test_a_budget_the_person_gives_after_the_dashes_is_kept_when_it_is_tighter(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"], "limits": {"tokens": TOKENS}})
    fake_api.script = [record("a"), [text("done")]]

    code, run = run_to_end(claude, plugin_copy, project, claude_args=["--task-budget", "25000"])

    assert code == 0, run.stderr
    [start] = run.of("session_start")
    assert start["task_budget"] == 25000 and start["argv"].count("--task-budget") == 1
    assert {e.body["output_config"]["task_budget"]["total"] for e in fake_api.main_entries()} == {25000}
