"""What a person is shown when Claude Code asks about a sandboxed call, in the real TUI (tmux), with
bubblewrap: the model's command verbatim in a short rewritten line (no bwrap arguments, no shell
internals) and a reason that leads with the command; saying yes runs it, and the `baton record`
chained in it reaches the job (the person was asked about it)."""

from __future__ import annotations

import time
from pathlib import Path

import gatemodes

from .driver import Claude
from .fakeapi import FakeAPI, text, tool_use
from .jobstate import Turns, ledger, write_plan
from .test_interactive import Tmux, start_tui, submit, tmux  # noqa: F401 - tmux is the fixture this test uses

COMMAND = "python3 -c 'print(6 * 7)' > answer.txt && baton record a done \"answer written\""


def test_the_box_shows_the_command_verbatim_in_a_short_line_and_yes_records(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path, tmux: Tmux  # noqa: F811
) -> None:
    gatemodes.sandboxed_here(claude.home)
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = Turns([tool_use("Bash", {"command": COMMAND, "description": "write the answer"}, id="w")],
                            [text("all done")])
    start_tui(claude, project, plugin_copy, tmp_path, tmux)
    submit(tmux, "do step a")
    box = tmux.settled(lambda s: "BATON_CMD" in s and "Do you want" in s and "1. Yes" in s,
                       "Claude Code's permission box", 90)

    joined = " ".join(line.strip() for line in box.splitlines())
    assert COMMAND in joined, box  # the model's command, verbatim
    assert "bwrap" not in box and "__baton" not in box and "--ro-bind" not in box, box
    shown = [line for line in box.splitlines() if "BATON_CMD" in line or "baton/run/" in line]
    assert len(shown) <= 3, box  # the line that sources baton's script, and the end line
    assert f"`{COMMAND}`: baton asks you before running it in its sandbox" in joined, box

    tmux.keys("Enter")  # Yes
    tmux.wait_for(lambda s: "Do you want" not in s, "the permission box closed after Yes", 30)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not [r for r in ledger(project) if r["status"] == "done"]:
        time.sleep(0.2)
    assert [(r["step"], r["status"], r["note"]) for r in ledger(project)] == [("a", "done", "answer written")], \
        tmux.screen()
    assert (project / "answer.txt").read_text() == "42\n"
