"""docs/run.md keeps up with `baton run`: every way a session ends and every exit code is in its
tables, and the settings table names what `baton run` sets in its sessions' environment."""

from __future__ import annotations

import re

from docpages import section

from store.run import command_line, stops
from store.run.stream import ENDINGS
from store.state.job import PARK_APPROVALS

LOCK_HELD, BAD_USAGE = 7, 2  # raised outside store.run.stops (store.run.lock, the CLI's usage errors)


def first_cells(text: str) -> list[str]:
    """What the first cell of each table row names: its `quoted` words, or the cell itself."""
    out: list[str] = []
    for cell in re.findall(r"^\| (.+?) \|", text, re.M):
        out += re.findall(r"`([^`]+)`", cell) or [cell.strip()]
    return out


def test_every_ending_and_exit_code_is_in_the_tables() -> None:
    text = section("Unattended runs")
    cells = first_cells(text)
    assert set(ENDINGS) <= set(cells), set(ENDINGS) - set(cells)
    codes = {int(c) for c in cells if c.isdigit()}
    assert codes == {*stops.CODES.values(), LOCK_HELD, BAD_USAGE}


def test_the_park_setting_is_documented_where_settings_are() -> None:
    assert command_line.PARK_APPROVALS == PARK_APPROVALS
    assert f"| `{PARK_APPROVALS}` |" in section("Configuration")
    assert command_line.environment({}, "job")[PARK_APPROVALS] == "1"
    assert command_line.environment({PARK_APPROVALS: "0"}, "job")[PARK_APPROVALS] == "0"  # the person's word stands
