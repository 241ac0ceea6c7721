"""``baton once KEY -- CMD`` is decided as CMD itself would be (issue 23.4): it runs without a
refusal when the person's rules (or reading it) would let CMD run, asks in plain words when they
ask or do not cover it, and is denied when they deny it; the reason leads with the model's command."""

from __future__ import annotations

import json
from typing import Dict, List, Optional

import pytest
from conftest import Hook, JobDir, Payloads

PLAN: Dict[str, object] = {"steps": ["deliver", "later"]}


def answer(hook: Hook, job: JobDir, payload: Payloads, command: str, rules: Optional[Dict[str, List[str]]] = None,
           plan: Optional[Dict[str, object]] = None):  # type: ignore[no-untyped-def]
    job.plan(plan or PLAN)
    if rules is not None:
        (job.project / ".claude").mkdir(exist_ok=True)
        (job.project / ".claude/settings.local.json").write_text(json.dumps({"permissions": rules}))
    return hook("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"}))


@pytest.mark.parametrize("command,rules,plan,decision,words", [
    ("baton once k -- ls", None, None, "allow", "a read-only command"),
    ("baton once n -- ./notify.sh team", {"allow": ["Bash(./notify.sh:*)"]}, None, "allow", "your allow rule"),
    ("baton once n -- ./notify.sh team", None, {"sandbox": {"auto_allow": True}, "steps": ["deliver"]}, "allow",
     "sandbox.auto_allow"),
    ("baton once n -- ./notify.sh team", None, None, "ask", "its command `./notify.sh team`: it is not covered by "
                                                           "your allow rules"),
    ("baton once n -- ./notify.sh team", {"ask": ["Bash(./notify.sh:*)"], "allow": ["Bash"]}, None, "ask",
     "your ask rule Bash(./notify.sh:*)"),
    ("baton once n -- ./notify.sh team", {"deny": ["Bash(./notify.sh:*)"]}, None, "deny",
     "your Claude Code deny rule Bash(./notify.sh:*)"),
], ids=["read-only", "allow-rule", "auto-allow", "not-covered", "ask-rule", "deny-rule"])
def test_once_is_decided_as_its_command_would_be(hook: Hook, job: JobDir, payload: Payloads, command: str,
                                                 rules: Optional[Dict[str, List[str]]],
                                                 plan: Optional[Dict[str, object]], decision: str, words: str) -> None:
    if "auto_allow" in json.dumps(plan) and not hook.sandboxed:  # type: ignore[attr-defined]
        decision, words = "ask", "not covered"  # auto_allow holds only where the command runs in the sandbox
    result = answer(hook, job, payload, command, rules, plan)
    assert result.decision == decision and words in result.reason, result.reason
    if decision != "deny":
        assert result.reason.startswith(f"`{command}`"), result.reason  # it leads with the model's command
        assert "is not one of the commands" not in result.reason and "; the command it runs" not in result.reason
