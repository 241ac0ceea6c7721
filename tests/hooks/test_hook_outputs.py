"""Every recorded payload through every hook, in-process and from hooks.json in a plugin copy:
the answer is documented JSON with the right hookEventName (or nothing), exit 0, quiet stderr."""

from __future__ import annotations

import io
import json
import sys
from typing import Dict, Optional, Tuple

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

from hooks import adapter

PLAN = {"job": "demo", "steps": [
    {"id": "build", "title": "Build it", "writes": ["src/**", "a.txt", "nb.ipynb"]},
    "check",
]}

# fixture -> (expected answer kind, a phrase the answer must contain), with PLAN active and nothing recorded
WITH_PLAN: Dict[str, Tuple[Optional[str], str]] = {
    "session_start_startup": ("context", "NEXT: build - Build it"),
    "session_start_resume": ("context", "NEXT: build - Build it"),
    "session_start_clear": ("context", "NEXT: build - Build it"),
    "session_start_compact": ("context", "NEXT: build - Build it"),
    "user_prompt_submit": ("context", "NEXT: build - Build it"),  # this session's model has not seen the brief
    "user_prompt_submit_command": ("stop", "NEXT: build - Build it"),
    "pre_tool_use_write": (None, ""),
    "pre_tool_use_write_subagent": (None, ""),
    "pre_tool_use_edit": (None, ""),
    "pre_tool_use_notebook_edit": (None, ""),
    "pre_tool_use_bash": (None, ""),
    "pre_tool_use_bash_subagent": (None, ""),
    "pre_tool_use_skill": (None, ""),
    "pre_tool_use_read": ("deny", "approval key"),
    "post_tool_use_write": (None, ""),
    "post_tool_use_write_subagent": (None, ""),
    "post_tool_use_edit": (None, ""),
    "post_tool_use_bash": (None, ""),
    "post_tool_use_failure_bash": (None, ""),
    "post_tool_use_failure_bash_subagent": (None, ""),
    "stop": ("context", "NEXT: build - Build it"),
    "stop_active": ("context", "NEXT: build - Build it"),
    "stop_background": (None, ""),  # an async subagent still runs: the session is not ending
    "session_end": (None, ""),  # the figures are noted; Claude Code shows nothing at the end
    "stop_failure": (None, ""),  # counted in the figures; Claude Code ignores any answer
}

# with baton's sandbox, a Bash call that passes comes back rewritten (read-only commands: allowed)
SANDBOXED: Dict[str, Tuple[Optional[str], str]] = {
    "pre_tool_use_bash": ("allow", "runs in baton's sandbox, where it may write src/**, a.txt, nb.ipynb"),
    "pre_tool_use_bash_subagent": ("allow", "runs in baton's sandbox, where it may write"),
}

WITHOUT_PLAN: Dict[str, Tuple[Optional[str], str]] = {
    **{name: (None, "") for name in WITH_PLAN},
    "user_prompt_submit_command": ("stop", "no job in"),
    "pre_tool_use_read": ("deny", "approval key"),
}


def kind(result: hookkit.Result) -> Optional[str]:
    if result.answer is None:
        return None
    if result.denied:
        return "deny"
    if result.stopped:
        return "stop"
    if result.decision in ("allow", "ask"):
        return result.decision
    return "context" if result.context else "other"


def test_the_tables_cover_every_fixture() -> None:
    assert sorted(WITH_PLAN) == hookkit.fixture_names()


@pytest.mark.parametrize("name", sorted(WITH_PLAN))
def test_recorded_payload_with_a_plan(name: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    event = hookkit.event_of(name)
    result = hook(event, payload(name))
    want, phrase = SANDBOXED.get(name, WITH_PLAN[name]) if hook.sandboxed else WITH_PLAN[name]
    assert kind(result) == want, result
    assert phrase in result.reason + result.context


@pytest.mark.parametrize("name", sorted(WITHOUT_PLAN))
def test_recorded_payload_without_a_plan_says_nothing(name: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    result = hook(hookkit.event_of(name), payload(name))
    want, phrase = WITHOUT_PLAN[name]
    assert kind(result) == want, result
    assert phrase in result.reason + result.context
    assert not job.state.exists(), "a hook created .baton/ in a project without a job"


@pytest.mark.parametrize("name", ["post_tool_use_write", "post_tool_use_write_subagent", "post_tool_use_edit",
                                  "post_tool_use_bash", "post_tool_use_failure_bash",
                                  "post_tool_use_failure_bash_subagent"])
def test_recorded_outcomes_reach_the_events_file(name: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    data = payload(name)
    hook(hookkit.event_of(name), data)
    (event,) = job.events()
    assert event["tool"] == data["tool_name"]
    assert event["ok"] is (data["hook_event_name"] == "PostToolUse")
    assert event["session"] == hookkit.SESSION
    assert event["step"] == "build"
    assert event["agent"] == data.get("agent_id", "")


def test_subagent_write_is_gated_like_the_main_agent(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    data = payload("pre_tool_use_write_subagent")
    data["tool_input"]["file_path"] = job.path("docs/sub.txt")
    result = hook("PreToolUse", data)
    assert result.denied and "may write only src/**" in result.reason


def test_main_prints_the_same_answer_as_run(job: JobDir, payload: Payloads, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    job.plan(PLAN)
    data = payload("pre_tool_use_read")
    raw = json.dumps(data).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    assert adapter.main("PreToolUse") == 0
    out = capsys.readouterr().out
    assert json.loads(out) == adapter.run("PreToolUse", raw)
    assert hookkit.check_output("PreToolUse", out) is not None


@pytest.mark.parametrize("event", sorted(hookkit.TOP_KEYS))
def test_the_checker_refuses_a_wrong_event_name(event: str) -> None:
    """The checker itself must be able to fail: the host drops JSON with a wrong hookEventName."""
    with pytest.raises(AssertionError):
        hookkit.check_output(event, json.dumps({"hookSpecificOutput": {"hookEventName": "Nope",
                                                                       "additionalContext": "x"}}))
    with pytest.raises(AssertionError):
        hookkit.check_output(event, json.dumps({"continue": False}))
