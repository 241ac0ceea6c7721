"""The hook test kit's PreToolUse checker accepts exactly what baton's sandbox answers and rejects
anything else: every answer the hook tests see passes through it, so it must be able to fail."""

from __future__ import annotations

import copy
import json
from typing import Any, Callable, Dict

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

PLAN = {"steps": [{"id": "build", "writes": ["src/**"]}, "later"]}
NET = {"sandbox": {"network": {"allow_hosts": ["pypi.org"]}}, "steps": ["build"]}


def bash(payload: Payloads, command: str) -> Dict[str, Any]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run", "timeout": 5000})


@pytest.mark.parametrize("plan, command", [(PLAN, "ls src"), (NET, "pip download x"), (PLAN, "baton brief"),
                                           (PLAN, "baton once k -- ls"), (PLAN, 'baton record build done "a > b"')])
def test_every_form_the_sandbox_emits_is_accepted(plan: Dict[str, Any], command: str, inproc: Hook, job: JobDir,
                                                  payload: Payloads) -> None:
    job.plan(plan)
    result = inproc("PreToolUse", bash(payload, command))  # checked against its payload on the way
    assert result.decision in ("allow", "ask") and result.command != command, result


def _set(path: str, value: Any) -> Callable[[Dict[str, Any]], None]:
    def change(answer: Dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = answer["hookSpecificOutput"]
        for key in parents:
            node = node[key]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return change


BROKEN: Dict[str, Callable[[Dict[str, Any]], None]] = {
    "updatedInput alone": _set("permissionDecision", KeyError),
    "allow without updatedInput": _set("updatedInput", KeyError),
    "deny with updatedInput": _set("permissionDecision", "deny"),
    "another command": _set("updatedInput.command", "rm -rf src"),
    "the original, unsandboxed": _set("updatedInput.command", "ls src"),
    "a field dropped": _set("updatedInput.timeout", KeyError),
    "a field changed": _set("updatedInput.description", "other"),
    "a decision Claude Code does not know": _set("permissionDecision", "yes"),
    "a reason that is not baton's": _set("permissionDecisionReason", "ok"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_anything_else_is_rejected(broken: str, inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    call = bash(payload, "ls src")
    answer = inproc("PreToolUse", call).answer
    assert answer is not None
    bad = copy.deepcopy(answer)
    BROKEN[broken](bad)
    with pytest.raises((AssertionError, KeyError)):
        hookkit.check_output("PreToolUse", json.dumps(bad), call)


def test_a_rewrite_must_answer_its_own_call(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    first, second = bash(payload, "ls src"), bash(payload, "cat README.md")
    answer = json.dumps(inproc("PreToolUse", first).answer)
    hookkit.check_output("PreToolUse", answer, first)
    with pytest.raises(AssertionError):
        hookkit.check_output("PreToolUse", answer, second)  # the rewrite runs another command
    write = payload("pre_tool_use_write", tool_input={"file_path": job.path("src/a"), "content": "x"})
    with pytest.raises(AssertionError):
        hookkit.check_output("PreToolUse", answer, write)  # only Bash is ever rewritten


@pytest.mark.parametrize("command", ["baton brief", "baton once k -- ls"])
def test_a_baton_launcher_with_another_environment_or_program_is_rejected(command: str, inproc: Hook, job: JobDir,
                                                                          payload: Payloads) -> None:
    job.plan(PLAN)
    call = bash(payload, command)
    answer = inproc("PreToolUse", call).answer
    assert answer is not None
    line = answer["hookSpecificOutput"]["updatedInput"]["command"]
    for bad in (f"LD_PRELOAD=/tmp/x.so {line}", line.replace("/bin/baton'", "/bin/other'"),
                line.replace("'-I' '-S'", "'-S'"), line + " '--force'"):
        changed = copy.deepcopy(answer)
        changed["hookSpecificOutput"]["updatedInput"]["command"] = bad
        with pytest.raises(AssertionError):
            hookkit.check_output("PreToolUse", json.dumps(changed), call)
