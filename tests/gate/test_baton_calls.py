"""The launcher line the gate writes for the model's own ``baton`` command, read back by PostToolUse."""

from __future__ import annotations

import pytest

from store.gate import baton_calls


def test_the_launcher_line_reads_back_as_the_models_baton_command() -> None:
    line = baton_calls.launcher(["record", "b", "done", "built it; twice"])
    assert baton_calls.launched(line) == "baton 'record' 'b' 'done' 'built it; twice'"
    with_prefix = "BATON_ONCE_PREFIX=/x/y.args " + baton_calls.launcher(["brief"])
    assert baton_calls.launched(with_prefix) == "baton 'brief'"


def test_other_commands_are_not_read_as_baton() -> None:
    assert baton_calls.launched("ls -la") == ""
    assert baton_calls.launched("python3 -I -S /tmp/bin/batonx record a done") == ""
    assert baton_calls.launched("echo 'unclosed") == ""


def test_a_huge_command_is_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    def refuse(line: str) -> None:  # shlex is quadratic in a word's length: a 3 MB command took minutes
        raise AssertionError(f"shlex.split called on {len(line)} characters")

    monkeypatch.setattr(shlex, "split", refuse)
    assert baton_calls.launched("python3 -I -S /p/bin/baton " + "x" * 3_000_000) == ""
    assert baton_calls.launched("ls " + "x" * 100) == ""


@pytest.mark.parametrize("args,ok", [
    (["brief"], True), ([], True), (["record", "a", "done", "x"], True), (["record", "b", "done"], False),
    (["claim"], True), (["claim", "--wait", "30"], True), (["claim", "--worker", "me"], True),
    (["claim", "--worker", "other"], False), (["release", "--worker=other"], False), (["release"], True),
    (["once", "--settle", "k", "done", "checked"], True), (["once", "--help"], True),
    (["approve", "a"], False), (["init", "x"], False), (["repair"], False),
])
def test_what_runs_without_a_prompt(args: list, ok: bool) -> None:  # type: ignore[type-arg]
    assert baton_calls.safe(args, "a", "me")[0] is ok


@pytest.mark.parametrize("args,inner", [
    (["once", "k", "--", "./notify.sh", "team"], ["./notify.sh", "team"]),
    (["once", "k", "--id-from", "id=(\\d+)", "--", "gh", "pr"], ["gh", "pr"]),
    (["once", "k", "ls"], ["ls"]), (["once", "--settle", "k", "done", "x"], None), (["once", "k"], None),
    (["record", "a", "done"], None),
])
def test_the_command_a_once_runs(args: list, inner: object) -> None:  # type: ignore[type-arg]
    assert baton_calls.once_command(args) == inner


@pytest.mark.parametrize("command,named", [
    ("echo A > a.txt && baton record a done x", True), ("(baton brief)", True), ("x;baton status", True),
    ("/opt/plugin/bin/baton brief", True), ("cat .baton/plan.json", False), ("python3 src/baton.py", False),
    ("echo batons", False), ("ls baton-old", False), ("sh tools/record.sh", False),
])
def test_a_broker_is_started_only_for_a_command_that_names_baton(command: str, named: bool) -> None:
    assert baton_calls.named(command) is named
