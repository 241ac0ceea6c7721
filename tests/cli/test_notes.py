"""Notes are never cut without a word: a note given to ``baton record`` (or typed after
``/baton:record``) is kept whole up to ``NOTE_MAX`` characters and refused beyond, nothing
recorded; the snapshot every hook reads keeps a long note's start and a digest, so its size does
not follow the notes and a retry is still told from a new note; a quoted note reads the same
typed in the prompt as through a shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest

from store.cli import prompt
from store.state import journal
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def _notes(baton: Baton) -> List[str]:
    return [json.loads(line)["note"] for line in baton("log", "--json").out.splitlines()]


def _state(sandbox: Sandbox) -> Dict[str, Any]:
    return json.loads((sandbox.state / "state.json").read_text())


def test_a_long_note_is_kept_whole_in_the_ledger_and_short_where_it_is_shown(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    note = " ".join(f"word{i}" for i in range(400))[: journal.NOTE_MAX]
    run = baton("record", "a", "done", note)
    assert run.code == 0, run.err
    assert _notes(baton) == [note]
    assert baton("verify").code == 0
    last = [line for line in baton("brief").out.splitlines() if line.startswith("LAST: ")]
    assert last == [f"LAST: a done {note[:79]}\u2026"]
    kept = _state(sandbox)["steps"]["a"]
    assert kept["note"] == note[:299] + "\u2026" and len(kept["note_sha"]) == 32
    assert len((sandbox.state / "state.json").read_bytes()) < 2000, "the snapshot does not grow with the note"


def test_a_note_over_the_limit_is_refused_and_nothing_is_recorded(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    run = baton("record", "a", "done", "z" * (journal.NOTE_MAX + 1))
    assert run.code == 2 and run.out == "", run
    assert "the note has 2,001 characters and a note is kept whole up to 2,000" in run.err
    assert "nothing was recorded" in run.err and "--artifact FILE" in run.err
    assert not (sandbox.state / "steps.jsonl").exists()
    typed = prompt.run("record", "a done " + "z" * (journal.NOTE_MAX + 1), Layout(sandbox.state, sandbox.project), {})
    assert typed.startswith("baton: the note has 2,001 characters")
    assert not (sandbox.state / "steps.jsonl").exists()


def test_a_retry_is_told_from_a_new_note_that_starts_the_same(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    first = "same start " * 40 + "ending one"
    second = "same start " * 40 + "ending two"
    assert baton("record", "a", "failed", first).code == 0
    again = baton("record", "a", "failed", first)
    assert again.code == 0 and again.out.startswith("already recorded a failed"), again.out
    other = baton("record", "a", "failed", second)
    assert other.code == 0 and other.out.startswith("recorded a failed"), other.out
    assert _notes(baton) == [first, second]


@pytest.mark.parametrize("typed, shell", [
    ('"quoted note, with a comma"', '"quoted note, with a comma"'),
    ("'single quotes'", "'single quotes'"),
    ('"it\'s done"', '"it\'s done"'),
    ('"say \\"hi\\""', '"say \\"hi\\""'),
    ("plain words  with two spaces", '"plain words  with two spaces"'),
    ("it's fine", '"it\'s fine"'),
])
def test_a_note_typed_in_the_prompt_reads_as_the_shell_gives_it_to_the_cli(
        typed: str, shell: str, baton: Baton, sandbox: Sandbox, plugin_copy: Path) -> None:
    """One reading for both: what `/baton:record a done NOTE` records is what `baton record a done
    NOTE` records when a shell runs it."""
    assert baton("init", "a", "b").code == 0
    answer = prompt.run("record", f"a done {typed}", Layout(sandbox.state, sandbox.project), {})
    assert answer.startswith("baton: recorded a done"), answer
    script = f"{sys.executable} {plugin_copy / 'bin' / 'baton'} record b done {shell}"
    done = subprocess.run(["bash", "-c", script], cwd=sandbox.project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    by_prompt, by_shell = _notes(baton)
    assert by_prompt == by_shell, (by_prompt, by_shell)
    assert '"' not in by_prompt or "hi" in by_prompt


def test_quotes_inside_a_note_typed_in_the_prompt_are_kept(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a").code == 0
    prompt.run("record", 'a done the "fast" path, not "the" other', Layout(sandbox.state, sandbox.project), {})
    assert _notes(baton) == ['the "fast" path, not "the" other']
