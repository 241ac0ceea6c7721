"""Each session's command line and environment: caps from the job's limits and the person's own,
baton's allow rules, the person's arguments last, and the job id in OTEL_RESOURCE_ATTRIBUTES."""

from __future__ import annotations

import pytest

from store.base.errors import BatonError
from store.run.command_line import (
    BATON_RULES,
    MIN_TASK_BUDGET,
    PROMPT,
    Caps,
    argv,
    environment,
    job_caps,
    split_user_args,
)


def test_the_persons_caps_are_taken_out_of_their_arguments() -> None:
    rest, caps = split_user_args(["--permission-mode", "acceptEdits", "--max-turns", "30",
                                  "--max-budget-usd=2.5", "--model", "opus", "--task-budget", "50000"])
    assert rest == ["--permission-mode", "acceptEdits", "--model", "opus"]
    assert (caps.turns, caps.cost_usd, caps.tokens) == (30, 2.5, 50000)


@pytest.mark.parametrize("args, message", [
    (["-p", "hi"], "baton run sets -p itself"),
    (["--output-format=json"], "baton run sets --output-format itself"),
    (["--resume", "abc"], "baton run sets --resume itself"),
    (["--continue"], "baton run sets --continue itself"),
    (["--max-turns"], "--max-turns needs a value"),
    (["--max-turns", "many"], "expected a number"),
    (["--max-budget-usd", "0"], "expected a number above 0"),
    (["--max-budget-usd", "nan"], "expected a number above 0"),
    (["--task-budget", "1.5"], "expected a whole number"),
    (["--task-budget=0"], "expected a number above 0"),
])
def test_arguments_that_would_fight_the_supervisor_are_refused(args: list, message: str) -> None:
    with pytest.raises(BatonError, match=message):
        split_user_args(args)


def test_each_session_gets_what_is_left_of_the_job_and_the_tighter_cap_wins() -> None:
    left = job_caps({"turns": 40, "cost_usd": 5.0, "tokens": 200_000}, turns_used=12, cost_used=1.25,
                    tokens_used=61_500)
    assert (left.turns, left.cost_usd, left.tokens) == (28, 3.75, 138_500)
    none = job_caps({}, 99, 99, 99)
    assert (none.turns, none.cost_usd, none.tokens) == (None, None, None)
    assert job_caps({"turns": 3}, 7, 0).turns == 0
    assert job_caps({"tokens": 1000}, 0, 0, 1500).tokens == 0
    tight = left.tighter(Caps(turns=10, cost_usd=None, tokens=150_000))
    assert (tight.turns, tight.cost_usd, tight.tokens) == (10, 3.75, 138_500)
    assert left.tighter(Caps(tokens=90_000)).tokens == 90_000
    assert Caps().tighter(Caps()).flags() == []
    assert Caps(5, 0.0001234).flags() == ["--max-turns", "5", "--max-budget-usd", "0.0001234"]
    assert Caps(tokens=138_500).flags() == ["--task-budget", "138500"]


def test_a_task_budget_below_the_apis_minimum_is_sent_as_the_minimum() -> None:
    assert Caps(tokens=300).flags() == ["--task-budget", str(MIN_TASK_BUDGET)] == ["--task-budget", "1024"]


def test_the_command_line_puts_the_persons_arguments_last() -> None:
    command = argv("/bin/claude", Caps(2, 1.5), ["--permission-mode", "acceptEdits"], plugin_dir="/p", resume="sid")
    assert command[:6] == ["/bin/claude", "-p", PROMPT, "--output-format", "stream-json", "--verbose"]
    rules_at = command.index("--allowedTools")
    assert command[rules_at + 1: rules_at + 1 + len(BATON_RULES)] == list(BATON_RULES)
    assert command[rules_at + 1 + len(BATON_RULES):] == [
        "--plugin-dir", "/p", "--max-turns", "2", "--max-budget-usd", "1.5", "--resume", "sid",
        "--permission-mode", "acceptEdits"]
    assert "--plugin-dir" not in argv("claude", Caps(), [])
    assert "Bash(baton record *)" in BATON_RULES and not [r for r in BATON_RULES if "approve" in r]


@pytest.mark.parametrize("before, after", [
    ({}, "baton.job.id=port%2Fapi%20v2"),
    ({"OTEL_RESOURCE_ATTRIBUTES": "team=infra"}, "team=infra,baton.job.id=port%2Fapi%20v2"),
    ({"OTEL_RESOURCE_ATTRIBUTES": "team=infra, "}, "team=infra,baton.job.id=port%2Fapi%20v2"),
])
def test_the_job_id_is_appended_to_the_resource_attributes(before: dict, after: str) -> None:
    env = environment({"PATH": "/bin", **before}, "port/api v2")
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == after and env["PATH"] == "/bin"
