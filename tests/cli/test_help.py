"""Help that explains, and typos that get the nearest word: every subcommand's ``--help`` says what
it does in a sentence, describes every argument (positional ones too) and gives examples that
really parse; a mistyped command, choice or option is answered with "did you mean"."""

from __future__ import annotations

import argparse
import re
import shlex
from typing import TYPE_CHECKING, Dict, List

import pytest

from store.base.errors import BatonError
from store.cli import arguments, once
from store.cli.main import build_parser

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def _commands() -> Dict[str, argparse.ArgumentParser]:
    return dict(build_parser().get_default("commands"))


def _undescribed(name: str, command: argparse.ArgumentParser) -> List[str]:
    """What ``command``'s help leaves unsaid: its description, or an argument's help."""
    missing = []
    description = command.description or ""
    if not re.search(r"[A-Z].{20,}\.", description):
        missing.append(f"{name}: no sentence saying what it does")
    for action in command._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.help or action.help == argparse.SUPPRESS:
            missing.append(f"{name}: {'/'.join(action.option_strings) or action.metavar or action.dest} has no help")
    return missing


def test_every_subcommand_says_what_it_does_and_describes_every_argument() -> None:
    commands = _commands()
    assert len(commands) >= 17 and {"record", "once", "run", "session", "store"} <= set(commands)
    missing = [line for name, command in commands.items() for line in _undescribed(name, command)]
    assert missing == []


def test_the_walk_finds_a_missing_description_or_argument_help() -> None:
    """The check above, shown failing: a parser like the ones argparse makes by default."""
    bare = argparse.ArgumentParser(prog="baton bare")
    bare.add_argument("step", metavar="STEP")
    bare.add_argument("--all", action="store_true")
    assert _undescribed("bare", bare) == ["bare: no sentence saying what it does", "bare: STEP has no help",
                                         "bare: --all has no help"]


def _examples(command: argparse.ArgumentParser) -> List[List[str]]:
    text = command.epilog or ""
    if not text.startswith(arguments.EXAMPLES):
        return []
    return [shlex.split(line, comments=True) for line in text.splitlines()[1:]]


def test_every_example_in_the_help_parses_as_the_command_it_illustrates() -> None:
    parser = build_parser()
    seen = 0
    for name, command in _commands().items():
        for words in _examples(command):
            assert words[:2] == ["baton", name], words
            parsed = arguments.parse(parser, words[1:])
            assert parsed.command == name
            seen += 1
    assert seen >= 25


def test_record_help_lists_its_artifacts_and_the_note(baton: Baton) -> None:
    run = baton("record", "--help")
    assert run.code == 0 and run.err == ""
    for words in ("--artifact PATH_OR_URI", "--sha256 HEX", "NOTE", "STATUS", "one of running, done, failed, skipped",
                  "examples:", 'baton record fetch-data done "data/raw.csv, 12,408 rows"'):
        assert words in run.out, words


def test_artifacts_may_come_before_the_step_or_after_the_status(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    (sandbox.project / "one.txt").write_text("1")
    (sandbox.project / "two.txt").write_text("2")
    run = baton("record", "--artifact", "one.txt", "a", "done", "--artifact", "two.txt", "both", "made")
    assert run.code == 0, run.err
    log = baton("log", "--json").out
    assert '"path":"one.txt"' in log.replace(" ", "") and '"path":"two.txt"' in log.replace(" ", "")
    assert '"note":"bothmade"' in log.replace(" ", "")
    bad = baton("record", "--sha256", "ab" * 32, "b", "done")
    assert bad.code == 2 and "follows the --artifact" in bad.err


def test_once_help_describes_every_option_its_usage_names(baton: Baton) -> None:
    shown = baton("once", "--help")
    assert shown.code == 0 and shown.out.startswith(once.USAGE)
    options = set(re.findall(r"--[a-z][a-z-]+", once.USAGE))
    assert {"--id-from", "--id-json", "--settle", "--reuse-key"} <= options
    body = shown.out[len(once.USAGE):]
    for option in options:
        assert re.search(rf"^  {option}\b", body, re.M), f"{option} is not described"


# ---------------------------------------------------------------- typos


@pytest.mark.parametrize("words, said", [
    (["stauts"], "unknown command 'stauts'; did you mean 'status'?"),
    (["STATUS"], "did you mean 'status'?"),
    (["verfiy"], "did you mean 'verify'?"),
    (["commands", "instal"], "unknown action 'instal'; did you mean 'install'? (one of: install, remove)"),
    (["store", "psuh"], "did you mean 'push'?"),
    (["run", "--resume-policy", "fersh"], "unknown --resume-policy 'fersh'; did you mean 'fresh'?"),
    (["status", "--jsno"], "unrecognized argument for `baton status`: '--jsno' (did you mean '--json'?)"),
    (["log", "--jsno", "--nn"], "'--jsno' (did you mean '--json'?), '--nn'"),
])
def test_a_typo_gets_the_nearest_word(baton: Baton, words: List[str], said: str) -> None:
    run = baton(*words)
    assert run.code == 2 and run.out == "" and run.err.count("\n") == 1, run
    assert said in run.err


@pytest.mark.parametrize("words", [["frobnicate"], ["log", "--al"], ["status", "--xyz"]])
def test_no_guess_when_nothing_is_near(baton: Baton, words: List[str]) -> None:
    run = baton(*words)
    assert run.code == 2 and "did you mean" not in run.err, run.err


def test_once_options_get_the_nearest_too(baton: Baton) -> None:
    run = baton("once", "--setle", "k", "done", "checked")
    assert run.code == 2 and "did you mean '--settle'?" in run.err, run.err
    run = baton("once", "k", "--id-form", "x", "--", "true")
    assert run.code == 2 and "did you mean '--id-from'?" in run.err, run.err


def test_the_parser_raises_one_line_not_usage() -> None:
    with pytest.raises(BatonError) as caught:
        arguments.parse(build_parser(), ["stauts"])
    assert "\n" not in caught.value.message and "usage:" not in caught.value.message
