"""`baton init --force` starts a new job: the old plan and ledger are archived whole, named and
verifiable, and the new job's ledger starts empty."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from store.state import archive, journal
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def test_force_archives_the_old_job_and_starts_a_clean_ledger(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    for step in ("a", "b"):
        assert baton("record", step, "done", f"old {step}").code == 0
    old_ledger = (sandbox.state / "steps.jsonl").read_bytes()
    run = baton("init", "--force", "x", "y")
    assert run.code == 0, run.err
    [folder] = list((sandbox.state / "archive").iterdir())
    assert folder.name.endswith("Z-job") and len(folder.name) == len("20261130T104512Z-job")
    last = json.loads(old_ledger.splitlines()[-1])["hash"]
    assert run.out.splitlines()[1] == (
        f"started a new job with a clean ledger; the old job (2 records, chain intact, last hash {last[:12]}) is "
        f"archived in .baton/archive/{folder.name}/; check it with "
        f"`BATON_DIR=.baton/archive/{folder.name} baton verify`")
    assert (folder / "steps.jsonl").read_bytes() == old_ledger
    assert json.loads((folder / "plan.json").read_text()) == {"steps": ["a", "b"]}
    assert not (sandbox.state / "steps.jsonl").exists()
    assert baton("brief").out.splitlines() == ["PLAN: x, y", "DONE: (nothing yet)", "NEXT: x"]
    checked = baton("verify", extra_env={"BATON_DIR": f".baton/archive/{folder.name}"})
    assert checked.out == f"ok: 2 records, chain intact (last hash {last[:12]})\n"


def test_the_archive_is_named_after_the_job_and_never_reused(sandbox: Sandbox) -> None:
    layout = Layout(sandbox.state, sandbox.project)
    sandbox.state.mkdir()
    names = []
    for _ in range(3):
        (sandbox.state / "plan.json").write_text('{"job": "migrate api/v2", "steps": ["a"]}')
        journal.append(layout, "a", "done", "x")
        names.append(archive.archive_job(layout, "migrate api/v2").folder.name)
    assert len(set(names)) == 3 and all("-migrate-api-v2" in n for n in names)
    assert names[1].endswith("-2") and names[2].endswith("-3")


def test_a_broken_ledger_is_archived_and_the_break_is_reported(sandbox: Sandbox) -> None:
    layout = Layout(sandbox.state, sandbox.project)
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text('{"steps": ["a"]}')
    journal.append(layout, "a", "running", "one")
    journal.append(layout, "a", "done", "two")
    lines = layout.ledger.read_bytes().splitlines(keepends=True)
    layout.ledger.write_bytes(lines[0].replace(b"one", b"0ne") + lines[1])
    moved = archive.archive_job(layout, "")
    assert moved.records == 0 and "line 1" in moved.problem
    assert "chain broken (line 1" in moved.describe("x")
    assert (moved.folder / "steps.jsonl").read_bytes().startswith(lines[0].replace(b"one", b"0ne"))
