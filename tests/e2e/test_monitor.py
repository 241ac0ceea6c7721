"""The job's figures across three real sessions, one of them killed: `baton status --json` afterwards
counts the sessions and how each ended, the tool calls and failures, the attempts of each step, and
tokens equal to the sum of what the scripted model API reported in `usage`, answer by answer.

The scripted API reports different usage for every answer (input, output, cache read, cache write),
so a response counted twice, or one missed, shows.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from .briefs import Run, bash, write
from .driver import Claude, kill_while_hanging
from .fakeapi import HANG, FakeAPI, LoggedRequest, text
from .jobstate import baton, ledger, write_plan

PLAN = {"job": "e2e-monitor", "steps": [{"id": "a", "phase": "implemented"}, "b", "c", "d"]}


def varied_usage() -> Any:
    counter = itertools.count(1)

    def usage(entry: LoggedRequest) -> dict[str, int]:
        n = next(counter)
        return {"input_tokens": 100 + n, "output_tokens": 7 + n, "cache_read_input_tokens": 1000 * n,
                "cache_creation_input_tokens": 50 + n}

    return usage


def total(reported: list[tuple[str, dict[str, int]]]) -> dict[str, int]:
    keys = {"input": "input_tokens", "output": "output_tokens", "cache_read": "cache_read_input_tokens",
            "cache_creation": "cache_creation_input_tokens"}
    out = {kind: sum(usage.get(key, 0) for _, usage in reported) for kind, key in keys.items()}
    out["total"] = sum(out.values())
    return out


def test_a_job_across_three_sessions_one_killed(claude: Claude, fake_api: FakeAPI, project: Path,
                                                plugin_copy: Path, tmp_path: Path) -> None:
    write_plan(project, PLAN)
    fake_api.usage = varied_usage()

    # session 1: a done (one chained call), b fails once (a failing command, then its record), then killed
    fake_api.script = Run(
        [text("step a"), bash('echo A > a.txt && baton record a done "wrote a.txt"')],  # chained, as models do
        [bash("cat missing-input.txt"), bash('baton record b failed "no input yet"')],
        HANG,
    )
    kill_while_hanging(claude, fake_api, project, plugin_copy, seconds=90)
    first_answers = len(fake_api.reported)

    # session 2: b again (running, a write, done), c done; sent back once with NEXT d, then let go
    fake_api.script = Run(
        [bash('baton record b running "second try"'), write(project / "b.txt", "B\n")],
        [bash("false"), bash('baton record b done "wrote b.txt"'), bash('baton record c done "nothing to do"')],
        [text("pausing here")],
    )
    second = claude.run("continue the job", cwd=project, plugin_dir=plugin_copy)
    assert second.returncode == 0, second.stderr

    # session 3: d, and the job is complete
    fake_api.script = Run([bash('echo D > d.txt && baton record d done "wrote d.txt"')], [text("all done")])
    third = claude.run("finish the job", cwd=project, plugin_dir=plugin_copy)
    assert third.returncode == 0, third.stderr
    assert third.session_id != second.session_id

    run = baton(plugin_copy, project, claude.home, "status", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    (tmp_path / "status.json").write_text(run.stdout)

    # sessions: three, the first lost (killed, no end, no cost), the others ended with a reported cost
    assert data["sessions_total"] == 3
    sessions = data["sessions"]
    assert [s["ended"] for s in sessions] == ["lost", "other", "other"]
    assert [s["id"] for s in sessions[1:]] == [second.session_id, third.session_id]
    assert sessions[0]["cost_usd"] is None and all(s["cost_usd"] for s in sessions[1:])
    assert data["cost"]["complete"] is False and data["cost"]["unreported_sessions"] == 1
    assert data["cost"]["reported_usd"] == round(sessions[1]["cost_usd"] + sessions[2]["cost_usd"], 6)

    # tool calls: every Bash and Write that ran (not the turn the kill interrupted); failures: cat, false
    assert data["tools"]["calls"] == 9
    assert data["tools"]["failures"] == 2
    assert [s["calls"] for s in sessions] == [3, 5, 1] and [s["failures"] for s in sessions] == [1, 1, 0]
    assert data["tools"]["last_error"]["step"] == "b"

    # attempts per step, as the ledger numbers them, and how each ended
    attempts = {s["id"]: (s["attempt"], [a["outcome"] for a in s["attempts"]]) for s in data["steps"]}
    assert attempts == {"a": (1, ["done"]), "b": (2, ["failed", "done"]), "c": (1, ["done"]),
                        "d": (1, ["left", "done"])}  # session 2 paused on d (one turn) and ended
    assert [a["session"] for a in data["steps"][3]["attempts"]] == [second.session_id, third.session_id]
    assert data["retries"] == 1 and data["done"] == 4 and data["next"] is None
    assert [(r["step"], r["status"]) for r in ledger(project) if r["status"] != "stop"] == [
        ("a", "done"), ("b", "failed"), ("b", "running"), ("b", "done"), ("c", "done"), ("d", "done")]

    # tokens: exactly what the API reported, answer by answer, for the job and for each session
    assert {kind for kind, _ in fake_api.reported} == {"main"}, "only main requests in -p mode"
    assert data["tokens"] == total(fake_api.reported)
    assert sessions[0]["tokens"] == total(fake_api.reported[:first_answers])
    # "all done" was written when no step was left, but the ledger's times have whole seconds: an
    # answer that arrives within the second of `d done` (the scripted API answers at once) counts for d
    after_the_end = total(fake_api.reported[-1:])["total"]
    assert sum(s["tokens"]["total"] for s in data["steps"]) in (data["tokens"]["total"] - after_the_end,
                                                                data["tokens"]["total"])
    assert data["turns"] == len(fake_api.reported)

    # the dashboard and the report say the same, and the report renders without a browser error
    text_run = baton(plugin_copy, project, claude.home, "status")
    assert "3 sessions" in text_run.stdout and "lost" in text_run.stdout
    html = tmp_path / "report.html"
    assert baton(plugin_copy, project, claude.home, "report", "--html", str(html)).returncode == 0
    assert f'id="tool-calls" data-value="{data["tools"]["calls"]}"' in html.read_text()
