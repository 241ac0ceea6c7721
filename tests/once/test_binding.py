"""A ``baton once`` key is bound to what it first ran: its command, its folder and its step. The
same key with another of them is refused, naming the command that first used it, and runs and
replays nothing, unless ``--reuse-key`` says it is the same side effect; the CLI, the gate and the
shell scanner agree on where the command starts among ``baton once``'s words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import pytest

from store.base.once_words import command_start
from store.gate import baton_calls
from store.gate.rules import effects
from store.shell import analyse

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


@pytest.fixture
def job(baton: Baton, sandbox: Sandbox) -> Path:
    assert baton("init", "deliver", "report").code == 0
    return sandbox.project


def records(project: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (project / ".baton" / "steps.jsonl").read_text().splitlines()]


def test_the_issue_a_reused_key_with_another_command_is_refused(baton: Baton, job: Path) -> None:
    first = baton("once", "k-1", "--", "echo", "first")
    assert (first.code, first.out) == (0, "first\n")
    before = records(job)
    second = baton("once", "k-1", "--", "echo", "second-different")
    assert second.code == 2 and second.out == "", second
    assert second.err.count("\n") == 1
    assert "once k-1 is bound to what it first ran: `echo first` in step deliver, folder ." in second.err
    assert "differs in its command: `echo second-different`" in second.err
    assert "Nothing was run or replayed" in second.err and "baton once k-1 --reuse-key -- ..." in second.err
    assert records(job) == before
    same = baton("once", "k-1", "--", "echo", "first")
    assert (same.code, same.out) == (0, "first\n") and "Not run again; the stored result is replayed" in same.err


def test_reuse_key_replays_the_stored_result_for_the_other_command(baton: Baton, job: Path) -> None:
    assert baton("once", "k-1", "--", "sh", "-c", "echo made; exit 3").code == 3
    before = records(job)
    reused = baton("once", "k-1", "--reuse-key", "--", "sh", "-c", "echo made again; exit 0")
    assert (reused.code, reused.out) == (3, "made\n"), reused
    assert "(--reuse-key: it stands for this command too)" in reused.err
    assert records(job) == before


def test_the_folder_and_the_step_are_bound_too(baton: Baton, job: Path) -> None:
    (job / "sub").mkdir()
    assert baton("once", "k-1", "--", "echo", "x", cwd=job / "sub").code == 0
    elsewhere = baton("once", "k-1", "--", "echo", "x")
    assert elsewhere.code == 2 and "differs in its folder (., not sub)" in elsewhere.err
    assert baton("once", "k-1", "--", "echo", "x", cwd=job / "sub").code == 0
    assert baton("record", "deliver", "done").code == 0
    later = baton("once", "k-1", "--", "echo", "x", cwd=job / "sub")
    assert later.code == 2 and "differs in its step (report, not deliver)" in later.err
    [intent, result, _] = records(job)
    assert (intent["cwd"], result["cwd"], result["cmd"]) == ("sub", "sub", "echo x")
    assert intent["bind"] == result["bind"] and len(intent["bind"]) == 32


def test_a_key_reopened_by_retry_binds_to_its_next_run(baton: Baton, job: Path) -> None:
    assert baton("once", "pr", "--", "sh", "-c", "exit 4").code == 4
    assert baton("once", "--settle", "pr", "retry", "the flag was wrong").code == 0
    fixed = baton("once", "pr", "--", "echo", "fixed")
    assert (fixed.code, fixed.out) == (0, "fixed\n"), fixed
    assert baton("once", "pr", "--", "sh", "-c", "exit 4").code == 2


def test_an_open_run_is_settled_first_and_then_stands_for_its_own_command(baton: Baton, job: Path) -> None:
    crash = ["sh", "-c", "echo half; kill -9 $$"]
    assert baton("once", "crash", "--", *crash).code == 3  # killed by its own signal: outcome unknown
    other = baton("once", "crash", "--", "echo", "other")
    assert other.code == 3 and "outcome unknown" in other.err and other.out == "", other
    assert "This call differs from that run in its command" in other.err
    assert baton("once", "--settle", "crash", "done", "it happened").code == 0
    refused = baton("once", "crash", "--", "echo", "other")
    assert refused.code == 2 and "bound to what it first ran: `sh -c 'echo half; kill -9 $$'` in step" in refused.err
    replay = baton("once", "crash", "--", *crash)
    assert replay.code == 0 and "was settled done" in replay.err, replay


def test_the_binding_compares_the_command_with_secrets_masked(baton: Baton, job: Path) -> None:
    token = "ghp_" + "a" * 36
    assert baton("once", "api", "--", "echo", f"token={token}").code == 0
    rotated = baton("once", "api", "--", "echo", "token=ghp_" + "b" * 36)
    assert rotated.code == 0 and "Not run again" in rotated.err  # the same call with a rotated token
    assert token not in (job / ".baton" / "steps.jsonl").read_text()


def test_records_written_before_keys_were_bound_are_not_compared(baton: Baton, job: Path) -> None:
    assert baton("once", "old", "--", "echo", "one").code == 0
    ledger = job / ".baton" / "steps.jsonl"
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    for record in lines:
        for field in ("bind", "cmd", "cwd"):
            record.pop(field, None)
    from store.ledger.ledger import format_line, seal

    prev, text = "0" * 32, b""
    for record in lines:
        body = {k: v for k, v in record.items() if k not in ("seq", "prev", "hash")}
        sealed = seal(body, record["seq"], prev)
        text += format_line(sealed)
        prev = sealed["hash"]
    ledger.write_bytes(text)
    (job / ".baton" / "state.json").unlink()
    old = baton("once", "old", "--", "echo", "two")
    assert (old.code, old.out) == (0, "one\n"), old


# ---------------------------------------------------------------- one reading of the words


WORDS: List[Sequence[Optional[str]]] = [
    ["k", "--", "echo", "x"], ["k", "echo", "x"], ["k", "--id-from", "r", "--", "echo"], ["k", "--reuse-key", "echo"],
    ["k", "--id-json", "a.b", "--reuse-key", "--", "--weird"], ["--settle", "k", "done", "x"], ["--help"], ["k"],
    ["k", "--"], ["k", "--id-from"], ["--reuse-key", "k", "--", "rm", "x"], [None, "--", "rm", "x"],
    ["k", None, "rm", "x"], ["k", "--id-from", None, "rm"],
]


@pytest.mark.parametrize("words", WORDS, ids=repr)
def test_the_cli_the_gate_and_the_scanner_find_the_same_command(words: Sequence[Optional[str]]) -> None:
    start = command_start(words)
    known = all(w is not None for w in words)
    if known:
        args = ["once", *[str(w) for w in words]]
        assert baton_calls.once_command(args) == (args[1 + start:] if start is not None else None)
        assert effects.once_inner(["baton", *args]) == (" ".join(args[1 + start:]) if start is not None else "")
    shell_words = " ".join("$X" if w is None else (w if w.replace("-", "").replace(".", "").isalnum() else f"'{w}'")
                           for w in words)
    scan = analyse(f"baton once {shell_words}", "/tmp", "/root")
    ran = [inv.argv for inv in scan.invocations if inv.argv and inv.argv[0] != "baton"]
    if start is None:
        assert ran == []
    else:
        assert ran and list(ran[0])[: len(words) - start] == [w for w in words[start:]], (ran, words[start:])


def test_a_computed_word_after_the_key_starts_the_command_so_it_stays_unknown() -> None:
    assert command_start(["k", None, "rm", "x"]) == 1
    assert command_start([None, "--", "rm"]) == 2
    assert command_start(["--reuse-key", "k", "--", "rm"]) is None  # KEY comes first; the CLI refuses this
