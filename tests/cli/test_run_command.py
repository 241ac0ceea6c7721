"""`baton session` (a script records how a Claude Code session ended) and the usage errors of
`baton run`, run as a subprocess from a copy of the plugin."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def _ledger(sandbox: Sandbox) -> List[Dict[str, Any]]:
    path = sandbox.state / "steps.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def job(sandbox: Sandbox, baton: Baton) -> Sandbox:
    assert baton("init", "fetch", "train").code == 0
    return sandbox


def test_a_script_records_each_session_and_a_resumed_one_counts_only_its_new_cost(job: Sandbox, baton: Baton) -> None:
    first = baton("session", "5c1f09aa-0000", "api_error", "--cost-usd", "0.25", "--turns", "3",
                  "--note", "529 overloaded")
    assert first.code == 0, first.err
    assert first.out == "recorded session 5c1f09aa api_error on fetch (#1, $0.2500)\n"
    again = baton("session", "5c1f09aa-0000", "completed", "--cost-usd", "0.75", "--turns", "5")
    assert again.out == "recorded session 5c1f09aa completed on fetch (#2, $0.5000)\n"
    sessions = [(r["session"], r["ended"], r["cost_usd"], r["turns"], r["note"]) for r in _ledger(job)]
    assert sessions == [("5c1f09aa-0000", "api_error", 0.25, 3, "api_error: 529 overloaded"),
                        ("5c1f09aa-0000", "completed", 0.5, 5, "completed")]
    status = json.loads(baton("status", "--json").out)
    assert status["next"] == "fetch" and status["done"] == 0  # a session record is not progress


def test_the_step_defaults_to_next_and_bad_input_is_one_line(job: Sandbox, baton: Baton) -> None:
    assert baton("session", "s2", "killed", "--step", "train").code == 0
    assert _ledger(job)[-1]["step"] == "train"
    for args, words in [(("s3", "fine"), "unknown session ending 'fine'"),
                        (("s3", "completed", "--step", "nope"), "unknown step 'nope'"),
                        (("s3", "completed", "--cost-usd", "-1"), "must be at least 0"),
                        (("s3", "completed", "--turns", "many"), "is not a number")]:
        run = baton("session", *args)
        assert run.code == 2 and run.err.startswith("baton: ") and words in run.err, run.err
        assert run.err.count("\n") == 1


def test_run_without_a_plan_or_without_claude_says_so(sandbox: Sandbox, baton: Baton, tmp_path: Path) -> None:
    no_plan = baton("run", "--claude", sys.executable)
    assert no_plan.code == 2 and "no job here" in no_plan.err and "baton init" in no_plan.err
    assert baton("init", "a").code == 0
    missing = baton("run", "--claude", str(tmp_path / "no-claude-here"))
    assert missing.code == 2 and "cannot find Claude Code" in missing.err and "--claude PATH" in missing.err
    fighting = baton("run", "--claude", sys.executable, "--", "--output-format", "json")
    assert fighting.code == 2 and "baton run sets --output-format itself" in fighting.err
    bad = baton("run", "--max-idle-sessions", "0")
    assert bad.code == 2 and "must be at least 1" in bad.err
    assert not (sandbox.state / "steps.jsonl").exists()
    assert sorted(os.listdir(sandbox.state)) == [".gitignore", "plan.json"]  # no lock taken before the checks
