"""The model never works from a stale brief: when the job changes under a running session (a plan
made with /baton:plan, a step approved with /baton:approve, a record made in a terminal), the
next prompt of that session carries the current brief, once; after the model's own `baton
record`, the next request carries the new NEXT. Checked in the requests the real CLI sent, in
one running session fed prompt after prompt (as the Agent SDK drives it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.state.protocol import HEADER, PROTOCOL
from store.state.seen import CHANGED

from .briefs import PROMPT_PREFIX, Injected, injected
from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import Turns, baton, ledger, write_plan
from .streaming import Session

STOPPED = "Operation stopped by hook: "


def prompt_contexts(request: dict[str, Any]) -> list[Injected]:
    return injected(request, PROMPT_PREFIX)


def since(fake_api: FakeAPI, mark: int) -> list[dict[str, Any]]:
    return fake_api.requests_main()[mark:]


def test_a_plan_made_mid_session_reaches_the_model_with_the_next_prompt(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    fake_api.script = Turns([text("hello")], [text("on it")])
    with Session(claude, project, plugin_copy) as session:
        session.send("hello")
        assert "baton" not in all_text_of(fake_api.requests_main()[0])  # no job yet: baton says nothing
        mark = len(fake_api.requests_main())
        made = session.send("/baton:plan a b c")
        assert since(fake_api, mark) == [] and made["num_turns"] == 0
        assert made["result"] == (f"{STOPPED}baton: created {project / '.baton' / 'plan.json'} with 3 steps.\n"
                                  "PLAN: a, b, c\nDONE: (nothing yet)\nNEXT: a")
        session.send("go on")
    request, *later = since(fake_api, mark)

    [context] = prompt_contexts(request)
    assert context.text == f"{PROTOCOL}\n\n{HEADER}\nPLAN: a, b, c\nDONE: (nothing yet)\nNEXT: a"
    assert later and all(len(prompt_contexts(r)) == 1 for r in later)  # given once, kept in the history


def test_an_approval_mid_session_reaches_the_model_with_the_next_prompt(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": [{"id": "design", "approval": True}, "build"]})
    fake_api.script = Turns([text("waiting for the approval")], [text("designing")])
    with Session(claude, project, plugin_copy) as session:
        session.send("start the job")
        [start] = injected(fake_api.requests_main()[0])
        assert start.line("WAITING: ") is not None
        assert prompt_contexts(fake_api.requests_main()[0]) == []  # the session start gave it already
        approved = session.send("/baton:approve design")
        assert approved["result"].startswith(f"{STOPPED}baton: approved design")
        mark = len(fake_api.requests_main())
        session.send("go on")
    request = since(fake_api, mark)[0]

    [context] = prompt_contexts(request)
    assert context.text.splitlines() == [CHANGED, HEADER, "PLAN: design, build", "DONE: (nothing yet)",
                                         "NEXT: design", "LAST: design approved"]
    assert context.message > start.message  # after the stale brief, so it is the one read last
    # the person's command and baton's answer stay in the conversation too
    assert "/baton:approve design" in all_text_of(request)
    assert f"{STOPPED}baton: approved design" in all_text_of(request)


def test_records_made_elsewhere_and_by_the_model_itself(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    record_b = tool_use("Bash", {"command": 'baton record b done "built it"', "description": "record b"})
    served: list[str] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        """Records b once, when asked to; otherwise answers (the Stop hook may send it back)."""
        if "do b" in all_text_of(body) and not served:
            served.append("b")
            return [record_b]
        return [text("ok")]

    fake_api.script = model
    with Session(claude, project, plugin_copy) as session:
        session.send("hello")
        assert baton(plugin_copy, project, claude.home, "record", "a", "done", "in a terminal").returncode == 0
        mark = len(fake_api.requests_main())
        session.send("do b")
        after_prompt, after_record = since(fake_api, mark)[:2]
        mark = len(fake_api.requests_main())
        session.send("anything else?")
    [last] = since(fake_api, mark)

    [context] = prompt_contexts(after_prompt)
    assert context.text.splitlines()[:2] == [CHANGED, HEADER]
    assert (context.line("NEXT: "), context.line("LAST: ")) == ("b", "a done in a terminal")
    assert "PostToolUse:Bash hook additional context: baton: NEXT: (all steps complete - stop)" in all_text_of(
        after_record)
    assert len(prompt_contexts(last)) == 1  # its own record was news it had been told: nothing added
    assert [(r["step"], r["status"]) for r in ledger(project) if r["status"] != "stop"] == [
        ("a", "done"), ("b", "done")]
