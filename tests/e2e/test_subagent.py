"""Subagents: tool calls made inside an Agent subagent meet the same gate as the main model's.

The fake API tells the subagent's requests from the main conversation's by the agent prompt in
their first user message (they carry `tools` too, and `cc_is_subagent=true` in the first system
block). The Agent tool runs in the background unless `run_in_background` is false, so both ways
are driven: the checks hold whichever order the two conversations' requests arrive in.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_use
from .jobstate import baton, gate_denied, ledger, results_by_id, write_plan

PLAN = {
    "job": "e2e-subagent",
    "limits": {"stop_blocks": 1},
    "steps": [{"id": "a", "title": "write the sources", "writes": ["src/**"]}, {"id": "b"}],
}
AGENT_PROMPT = "SUBAGENT-TASK: write the notes and the source file"
REPORT = "subagent report: notes were refused, src/sub.txt written"


def from_subagent(body: dict[str, Any]) -> bool:
    first = body["messages"][0]["content"]
    return isinstance(first, list) and any(b.get("text") == AGENT_PROMPT for b in first)


def answer(background: bool) -> Any:
    """The script: the main model delegates once; the subagent writes outside and inside `writes`.

    In the background, the subagent's first turn waits until the main model has been told the
    agent was launched, so the main model's turn ends (and Stop fires) while the subagent works.
    """
    main_went_on = threading.Event()

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        started = any(m["role"] == "assistant" for m in body["messages"])
        if from_subagent(body):
            if started:
                return [text(REPORT)]
            if background:
                assert main_went_on.wait(30), "the main model never went on after launching the agent"
            return [
                tool_use("Write", {"file_path": "notes.txt", "content": "sub\n"}, id="sub_write_out"),
                tool_use("Bash", {"command": "echo sub > notes2.txt", "description": "w"}, id="sub_bash_out"),
                tool_use("Write", {"file_path": "src/sub.txt", "content": "sub\n"}, id="sub_write_in"),
            ]
        if started:
            main_went_on.set()
            return [text("the subagent has the job")]
        agent = {"description": "write files", "prompt": AGENT_PROMPT, "subagent_type": "general-purpose"}
        if not background:
            agent["run_in_background"] = False
        return [tool_use("Agent", agent, id="agent_call")]

    return script


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_a_subagents_writes_meet_the_same_gate(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, background: bool
) -> None:
    write_plan(project, PLAN)
    fake_api.script = answer(background)

    run = claude.run("delegate step a", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    requests = fake_api.requests_main()
    sub = [r for r in requests if from_subagent(r)]
    main = [r for r in requests if not from_subagent(r)]
    assert len(sub) == 2
    assert "cc_is_subagent=true" in sub[0]["system"][0]["text"]
    assert {"Write", "Bash"} <= {t["name"] for t in sub[0]["tools"]}
    seen = results_by_id(sub[1])
    assert gate_denied(seen["sub_write_out"]), seen["sub_write_out"].text
    assert "notes.txt (resolved): step a may write only src/**" in seen["sub_write_out"].text
    assert gate_denied(seen["sub_bash_out"]), seen["sub_bash_out"].text
    assert "notes2.txt" in seen["sub_bash_out"].text
    assert not seen["sub_write_in"].is_error, seen["sub_write_in"].text
    assert not (project / "notes.txt").exists() and not (project / "notes2.txt").exists()
    assert (project / "src/sub.txt").read_text() == "sub\n"

    launched = results_by_id(main[1])["agent_call"].text
    if background:
        assert launched.startswith("Async agent launched successfully.")
    else:
        assert REPORT in launched
    agent_id = re.search(r"agentId: (\w+)", launched)
    assert agent_id is not None, launched
    # PostToolUse saw the subagent's write with its agent id, in the main session.
    events = [json.loads(line) for line in (project / ".baton/events.jsonl").read_text().splitlines()]
    [write_event] = [e for e in events if e.get("target") == "src/sub.txt"]  # besides tool outcomes: sessions
    assert write_event["agent"] == agent_id.group(1)
    assert write_event["session"] == run.session_id
    # Either way the main model hears the subagent's report (in the background: a task notification),
    # and baton's Stop hook sends it back to step a only after that, never while the subagent works.
    assert any(REPORT in all_text_of(r) for r in main)
    sent_back = [r for r in main if "Stop hook additional context: baton: the job is not finished" in all_text_of(r)]
    assert sent_back and all(REPORT in all_text_of(r) for r in sent_back)
    assert [r["status"] for r in ledger(project)] == ["stop"]


def test_a_subagent_given_the_approve_command_as_its_prompt_approves_nothing(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    """A prompt the model writes for a subagent is not a person's prompt: no hook takes it."""
    write_plan(project, {"steps": [{"id": "b", "approval": True, "writes": ["src/**"]}]})

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        first = body["messages"][0]["content"]
        if isinstance(first, list) and any(b.get("text") == "/baton:approve b" for b in first):
            return [text("sub: nothing to do")]
        if any(m["role"] == "assistant" for m in body["messages"]):
            return [text("asked a subagent")]
        agent = {"description": "approve", "prompt": "/baton:approve b", "run_in_background": False}
        return [tool_use("Agent", agent, id="agent_call")]

    fake_api.script = script
    run = claude.run("get b approved", cwd=project, plugin_dir=plugin_copy)

    assert run.returncode == 0, run.stderr
    requests = fake_api.requests_main()
    assert len(requests) == 3  # main, the subagent (its prompt reached the model), main again
    assert "sub: nothing to do" in results_by_id(requests[2])["agent_call"].text
    assert [r["status"] for r in ledger(project)] == ["stop"]
    brief = baton(plugin_copy, project, claude.home, "brief")
    assert "WAITING: b needs a person's approval" in brief.stdout
