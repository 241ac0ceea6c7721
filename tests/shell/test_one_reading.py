"""A command is read by the lexer once, however many of the shell package's answers a gate call asks
for (its effects with ``analyse``, its words with ``simple_commands``)."""

from __future__ import annotations

from typing import Any, List

import pytest

from store import shell
from store.shell import lex


def test_analyse_then_simple_commands_lex_the_command_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: List[str] = []
    real = lex._Lexer.__init__

    def counting(self: Any, text: str, nest: int) -> None:
        if nest == 0:
            reads.append(text)
        real(self, text, nest)

    monkeypatch.setattr(lex._Lexer, "__init__", counting)
    command = "cd src && echo \"$(date)\" > out.txt; baton record a done 'wrote out.txt' # a fresh command"
    scan = shell.analyse(command, "/p", "/home/u")  # a substitution is read as commands too
    parsed = shell.simple_commands(command)
    shell.analyse(command, "/p", "/home/u")
    assert reads.count(command) == 1, reads
    assert [c.words[0] for c in parsed.commands] == ["cd", "date", "echo", "baton"]
    assert scan.baton and not scan.readonly  # both answers are still read from the one pass


def test_the_tokens_handed_out_are_the_callers_lists() -> None:
    first, problems = lex.tokenize("echo a; echo b")
    first.clear()
    problems.append("changed by a caller")
    again, problems_again = lex.tokenize("echo a; echo b")
    assert again and problems_again == []
