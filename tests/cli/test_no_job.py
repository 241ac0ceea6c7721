"""No false success outside a job: in a folder with no job, every command that reads or writes a
job says that there is no job here and how to start one, exits 2 and creates nothing. The table
names every subcommand the parser has, so a new one must say how it behaves here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Tuple

import pytest

from store.cli.main import build_parser

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

OUTSIDE: Dict[str, Optional[Tuple[str, ...]]] = {
    "record": ("record", "a", "done", "note"),
    "brief": ("brief",),
    "status": ("status",),
    "verify": ("verify",),
    "report": ("report",),
    "export": ("export", "--print"),
    "log": ("log",),
    "repair": ("repair",),
    "once": ("once", "k-1", "--", "true"),
    "run": ("run", "--claude", "/nonexistent/claude"),
    "session": ("session", "sess-1", "completed"),
    "claim": ("claim",),
    "release": ("release",),
    "store": ("store", "push", "postgresql://127.0.0.1:9/nothing"),
    # these make a job, or work without one:
    "init": None,  # creates the job
    "commands": None,  # writes the bare /brief and /record command files, before or after `baton init`
    "merge": None,  # git's merge driver: works on the three files git passes
}
MORE = [("once", "--settle", "k-1", "done", "checked"), ("verify", "--json"), ("log", "-n", "3"), ("status", "--json"),
        ("brief", "--json"), ("report", "--html", "r.html"), ("export",)]


def test_the_table_names_every_command() -> None:
    assert set(OUTSIDE) == set(build_parser().get_default("commands"))


@pytest.mark.parametrize("args", [args for args in OUTSIDE.values() if args] + MORE, ids=" ".join)
def test_outside_a_job_a_command_says_there_is_none_and_how_to_start_one(
        args: Tuple[str, ...], baton: Baton, sandbox: Sandbox) -> None:
    run = baton(*args)
    assert run.code == 2 and run.out == "", run
    assert run.err.count("\n") == 1 and run.err.startswith(f"baton: {sandbox.state / 'plan.json'}: no job here; "), \
        run.err
    assert "start one with `baton init STEP...`" in run.err and "`baton init --plan FILE`" in run.err
    assert list(sandbox.project.iterdir()) == [], "nothing is created where there is no job"


def test_a_job_without_records_verifies_and_logs_nothing(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    verify = baton("verify")
    assert (verify.code, verify.out) == (0, "ok: 0 records, chain intact (last hash 000000000000)\n")
    assert baton("log").out == ""
    repair = baton("repair")
    assert (repair.code, repair.out) == (0, "nothing to repair: the job has no records yet\n")


def test_records_left_without_their_plan_are_still_checked_and_shown(baton: Baton, sandbox: Sandbox) -> None:
    assert baton("init", "a", "b").code == 0
    assert baton("record", "a", "done", "kept").code == 0
    (sandbox.state / "plan.json").unlink()
    verify = baton("verify")
    assert verify.code == 0 and verify.out.startswith("ok: 1 records, chain intact"), verify
    assert baton("log").out.split()[0] == "#1"
    assert "no job here" in baton("brief").err
