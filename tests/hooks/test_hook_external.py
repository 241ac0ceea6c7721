"""limits.external_ops through the hook: one job-wide count in counters.json of the operations that
leave the machine (each network command in a Bash call, each WebFetch, each MCP call), counted when
baton lets the call through; at the limit such calls are refused and everything else goes on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

from store.monitor import outcomes


def bash(payload: Payloads, command: str) -> Dict[str, Any]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "x"})


def tool(payload: Payloads, name: str, tool_input: Dict[str, Any]) -> Dict[str, Any]:
    return payload("pre_tool_use_skill", tool_name=name, tool_input=tool_input)


def test_operations_that_leave_are_counted_and_the_limit_holds(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"external_ops": 4}, "steps": ["a"]})
    assert not hook("PreToolUse", bash(payload, "curl -s https://example.com")).denied
    assert not hook("PreToolUse", bash(payload, "ls && git status && echo done")).denied  # not counted
    assert not hook("PreToolUse", tool(payload, "WebFetch", {"url": "https://example.com", "prompt": "p"})).denied
    assert not hook("PreToolUse", tool(payload, "mcp__github__get_issue", {"n": 1})).denied
    assert job.counters()["external_ops"] == 3
    assert not hook("PreToolUse", bash(payload, "wget -qO- https://example.com/a")).denied
    refused = hook("PreToolUse", bash(payload, "curl https://example.com/b"))
    assert refused.denied and refused.reason.endswith("[baton:external-ops]")
    assert "its 4 external operations (limits.external_ops)" in refused.reason
    assert hook("PreToolUse", tool(payload, "WebFetch", {"url": "https://example.com", "prompt": "p"})).denied
    assert hook("PreToolUse", tool(payload, "mcp__github__get_issue", {})).denied
    assert not hook("PreToolUse", bash(payload, "ls -la")).denied  # the rest of the job goes on
    assert job.counters()["external_ops"] == 4


def test_a_command_with_two_network_programs_counts_two(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"external_ops": 3}, "steps": ["a"]})
    assert not inproc("PreToolUse", bash(payload, "curl https://a.example && curl https://b.example")).denied
    assert job.counters()["external_ops"] == 2
    assert inproc("PreToolUse", bash(payload, "curl https://a.example; curl https://b.example")).denied  # 4 > 3
    assert job.counters()["external_ops"] == 2


def test_refused_calls_and_local_remotes_are_not_counted(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"limits": {"external_ops": 5}, "rules": [{"id": "net", "allow_hosts": ["ok.example"], "reason": "r"}],
              "steps": ["a"]})
    assert inproc("PreToolUse", bash(payload, "curl https://evil.example")).denied
    assert not inproc("PreToolUse", bash(payload, "git push /tmp/somewhere.git HEAD:x")).denied
    assert not inproc("PreToolUse", bash(payload, "curl file:///etc/hostname")).denied
    assert job.counters().get("external_ops", 0) == 0


def test_baton_once_and_the_gate_share_one_count(job: JobDir) -> None:
    job.plan({"limits": {"external_ops": 2}, "steps": ["a"]})
    assert outcomes.take_external(job.layout, 1, 2) == 1
    assert outcomes.take_external(job.layout, 1, 2) == 2
    assert outcomes.take_external(job.layout, 1, 2) is None
    assert outcomes.take_external(job.layout, 3, None) == 5  # no limit: counted all the same


def test_concurrent_calls_never_pass_the_limit(job: JobDir, payload: Payloads, plugin_root: Path,
                                               python_shim: str) -> None:
    """Eight hook processes at once, as Claude Code starts parallel tool calls, with room for three."""
    job.plan({"limits": {"external_ops": 3}, "steps": ["a"]})
    (entry,) = hookkit.commands_for(plugin_root / "hooks" / "hooks.json", "PreToolUse",
                                    bash(payload, "curl https://x.example"), str(job.home))
    argv = [str(entry["command"])] + [str(a).replace("${CLAUDE_PLUGIN_ROOT}", str(plugin_root)) for a in entry["args"]]
    env = hookkit.hook_env(os.environ, job.project, plugin_root, job.home / "data", hookkit.SESSION, python_shim)
    procs: List[subprocess.Popen[bytes]] = [
        subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=job.project)
        for _ in range(8)]
    outs = [p.communicate(json.dumps(bash(payload, f"curl https://x.example/{n}")).encode(), timeout=60)[0]
            for n, p in enumerate(procs)]
    denied = [b"external-ops" in out for out in outs]
    assert denied.count(False) == 3 and denied.count(True) == 5
    assert job.counters()["external_ops"] == 3


@pytest.mark.parametrize("limit", [0, -1, 1.5, "3", True])
def test_a_bad_limit_is_a_plan_error(limit: Any, job: JobDir, inproc: Hook, payload: Payloads) -> None:
    job.plan({"limits": {"external_ops": limit}, "steps": ["a"]})
    result = inproc("PreToolUse", bash(payload, "curl https://x.example"))
    assert result.denied and "limits.external_ops" in result.reason
    assert "expected a positive whole number" in result.reason
