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
