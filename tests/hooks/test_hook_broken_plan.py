"""A broken ``.baton/plan.json`` is not a passing fault: the gate refuses every call it gates and
says that the plan is broken, where (the file and the line or field), and that a person must fix
it, never "Try a simpler call", which sent the model retrying around a plan it may not edit."""

from __future__ import annotations

from typing import Dict, Tuple

import pytest
from conftest import Hook, JobDir, Payloads

BROKEN: Dict[str, Tuple[str, str]] = {  # the plan's text, and where the refusal must say it is broken
    "bad JSON": ('{\n  "steps": [\n    "a",\n  }\n}\n', "invalid JSON at line 4 column 3"),
    "a bad field": ('{"steps": ["a"], "limits": {"max_calls": "many"}}', "limits"),
    "a duplicate key": ('{"steps": ["a"], "steps": ["b"]}', "duplicate key 'steps'"),
    "no steps": ('{"job": "x"}', "steps"),
}


@pytest.mark.parametrize("tool", ["pre_tool_use_bash", "pre_tool_use_write", "pre_tool_use_edit"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_the_gate_says_the_plan_is_broken_where_and_that_a_person_must_fix_it(
        hook: Hook, job: JobDir, payload: Payloads, broken: str, tool: str) -> None:
    text, where = BROKEN[broken]
    job.plan(text)
    result = hook("PreToolUse", payload(tool))
    assert result.denied, result.out
    reason = result.reason
    assert reason.startswith(f"baton's plan is broken: {job.layout.plan}: "), reason
    assert where in reason, reason
    assert "tell the person" in reason and "You cannot fix it yourself" in reason
    assert "baton init --force --plan FILE" in reason and reason.endswith("[baton:plan-broken]")
    assert "Try a simpler call" not in reason and "gate could not check" not in reason


def test_a_fixed_plan_lets_the_call_through_again(hook: Hook, job: JobDir, payload: Payloads) -> None:
    write = payload("pre_tool_use_write", tool_input={"file_path": str(job.project / "notes.txt"), "content": "x"})
    job.plan('{"steps": [}')
    assert "[baton:plan-broken]" in hook("PreToolUse", write).reason
    job.plan(["a", "b"])
    assert not hook("PreToolUse", write).denied
