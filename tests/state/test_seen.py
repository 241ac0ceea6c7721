"""The model is told the job again only when it changed since that session's model last saw it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from store.state import seen
from store.state.location import Layout
from store.state.protocol import HEADER, PROTOCOL

if TYPE_CHECKING:
    from conftest import Sandbox

BRIEF = "PLAN: a, b\nDONE: (nothing yet)\nNEXT: a"


@pytest.fixture
def layout(sandbox: Sandbox) -> Layout:
    sandbox.state.mkdir()
    return Layout(sandbox.state, sandbox.project)


def test_a_session_that_saw_nothing_gets_the_protocol_and_the_brief(layout: Layout) -> None:
    assert seen.for_prompt(layout, "s1", BRIEF) == f"{PROTOCOL}\n\n{HEADER}\n{BRIEF}"
    assert seen.for_prompt(layout, "s1", BRIEF) is None


def test_a_changed_brief_is_given_again_once(layout: Layout) -> None:
    seen.mark(layout, "s1", BRIEF)
    changed = BRIEF.replace("NEXT: a", "NEXT: b")
    assert seen.for_prompt(layout, "s1", changed) == f"{seen.CHANGED}\n{HEADER}\n{changed}"
    assert seen.for_prompt(layout, "s1", changed) is None
    assert seen.for_prompt(layout, "s2", changed) is not None  # another session has its own view


def test_after_its_own_record_the_model_gets_next_and_the_news(layout: Layout) -> None:
    seen.mark(layout, "s1", BRIEF)
    after = ("PLAN: a, b\nDONE: a\nNEXT: b\nLAST: a done x\n"
             "WAITING: b needs a person's approval (they type /baton:approve b); until then only read")
    assert seen.after_record(layout, "s1", after) == (
        "baton: NEXT: b\nWAITING: b needs a person's approval (they type /baton:approve b); until then only read")
    assert seen.after_record(layout, "s1", after) is None
    assert seen.for_prompt(layout, "s1", after) is None


def test_the_file_keeps_a_bounded_number_of_sessions(layout: Layout) -> None:
    for n in range(seen.KEEP_SESSIONS + 10):
        seen.mark(layout, f"s{n}", BRIEF)
    assert seen.last_seen(layout, "s0") is None
    assert seen.last_seen(layout, f"s{seen.KEEP_SESSIONS + 9}") == seen.fingerprint(BRIEF)
    seen.mark(layout, "s20", BRIEF + "x")  # marking again makes a session the newest
    for n in range(seen.KEEP_SESSIONS - 1):
        seen.mark(layout, f"t{n}", BRIEF)
    assert seen.last_seen(layout, "s20") is not None


def test_a_damaged_file_means_nothing_was_seen(layout: Layout) -> None:
    (layout.root / seen.NAME).write_text("{not json")
    assert seen.last_seen(layout, "s1") is None
    assert seen.for_prompt(layout, "s1", BRIEF) is not None
    assert seen.last_seen(layout, "s1") == seen.fingerprint(BRIEF)


def test_a_file_that_cannot_be_written_costs_nothing_but_a_repeat(layout: Layout) -> None:
    (layout.root / seen.NAME).mkdir()  # a folder where the file belongs: every write fails
    assert seen.for_prompt(layout, "s1", BRIEF) is not None
    assert seen.for_prompt(layout, "s1", BRIEF) is not None  # not remembered, so given again
