"""The model's view of the job stays current: a prompt carries the brief again when the job changed
since that session's model last saw it, and after its own `baton record` the model hears the new
NEXT; when nothing changed, nothing is added."""

from __future__ import annotations

from typing import Any, Dict

from conftest import Hook, JobDir, Payloads

from store.state.protocol import HEADER, PROTOCOL
from store.state.seen import CHANGED


def prompt(payload: Payloads, text: str = "go on") -> Dict[str, Any]:
    return payload("user_prompt_submit", prompt=text)


def test_a_plan_made_mid_session_reaches_the_next_prompt(hook: Hook, job: JobDir, payload: Payloads) -> None:
    assert hook("SessionStart", payload("session_start_startup")).out == ""  # no job yet: nothing
    assert hook("UserPromptSubmit", prompt(payload)).out == ""
    assert hook("UserPromptSubmit", prompt(payload, "/baton:plan a b c")).stopped
    context = hook("UserPromptSubmit", prompt(payload)).context
    assert context == f"{PROTOCOL}\n\n{HEADER}\nPLAN: a, b, c\nDONE: (nothing yet)\nNEXT: a"
    assert hook("UserPromptSubmit", prompt(payload)).out == ""  # once


def test_an_approval_typed_mid_session_reaches_the_next_prompt(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": [{"id": "design", "approval": True}, "build"]})
    assert "WAITING: design" in hook("SessionStart", payload("session_start_startup")).context
    assert hook("UserPromptSubmit", prompt(payload)).out == ""  # nothing new since the session started
    assert hook("UserPromptSubmit", prompt(payload, "/baton:approve design")).stopped
    context = hook("UserPromptSubmit", prompt(payload)).context
    assert context.splitlines()[:2] == [CHANGED, HEADER]
    assert "NEXT: design" in context and "WAITING" not in context


def test_a_record_made_elsewhere_reaches_the_next_prompt(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    hook("SessionStart", payload("session_start_startup"))
    job.record("a", "done", "by hand in a terminal", session="someone-else")
    context = hook("UserPromptSubmit", prompt(payload)).context
    assert context.endswith("NEXT: b\nLAST: a done by hand in a terminal")


def test_the_models_own_record_is_answered_with_the_new_next(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a", {"id": "b", "approval": True}]})
    hook("SessionStart", payload("session_start_startup"))
    job.record("a", "done", "did it")
    ran = payload("post_tool_use_bash", tool_input={"command": 'baton record a done "did it"', "description": "r"})
    context = hook("PostToolUse", ran).context
    assert context == ("baton: NEXT: b\nWAITING: b needs a person's approval (they type /baton:approve b); until "
                       "then only read, and do not record it")
    assert hook("PostToolUse", ran).out == ""  # told once
    assert hook("UserPromptSubmit", prompt(payload)).out == ""  # and the next prompt knows it has seen it


def test_other_bash_calls_say_nothing_about_next(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    hook("SessionStart", payload("session_start_startup"))
    job.record("a", "done")
    for command in ("baton brief", "echo record", "ls records/"):
        ran = payload("post_tool_use_bash", tool_input={"command": command, "description": "x"})
        assert hook("PostToolUse", ran).out == "", command


def test_a_broken_plan_never_stops_a_prompt(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan('{"steps": [}')
    assert hook("UserPromptSubmit", prompt(payload)).out == ""
