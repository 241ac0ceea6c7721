"""The plan's rules inside baton's sandbox, tested by doing: a Bash command is sent to PreToolUse,
what Claude Code would run after the answer is run (nothing on deny, the rewritten command on
``updatedInput``, the original otherwise), PostToolUse follows, and the files are compared. A
``deny_content`` rule's files are read-only for sandboxed Bash like ``protect`` paths (a program
that writes them without naming them is stopped by the kernel, a new one is removed after), and
``limits.external_ops`` counts what the sandbox lets out as the fallback does."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Dict

import hookkit
from conftest import Hook, JobDir, Payloads

RULE = {"id": "prod", "deny_content": {"files": ["config/prod*.yaml"], "pattern": "debug:\\s*true"},
        "reason": "production stays quiet"}
# writes the covered files without naming them in the command, so no reading of the command sees it
GEN = """import pathlib
for name in ("config/prod.yaml", "config/prod-eu.yaml", "config/dev.yaml", "src/out.txt"):
    try:
        pathlib.Path(name).write_text("debug: true\\n")
    except OSError as exc:
        print(name, exc)
"""


def bash(payload: Payloads, command: str) -> Dict[str, Any]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"})


def run_as_claude_code(hook: Hook, payload: Payloads, job: JobDir, command: str) -> hookkit.Result:
    result = hook("PreToolUse", bash(payload, command))
    ran = hookkit.runs_after(result, command)
    if ran is not None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(job.home)}
        proc = subprocess.run(["bash", "-c", ran], cwd=job.project, env=env, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
        event = "PostToolUse" if proc.returncode == 0 else "PostToolUseFailure"
        name = "post_tool_use_bash" if proc.returncode == 0 else "post_tool_use_failure_bash"
        hook(event, payload(name, tool_input={"command": ran, "description": "run"}))
    return result


def test_a_program_cannot_write_the_files_a_deny_content_rule_covers(inproc_modes: Hook, job: JobDir,
                                                                     payload: Payloads) -> None:
    job.plan({"rules": [RULE], "steps": ["build"]})  # a step that may write the whole project
    for folder in ("config", "src", "tools"):
        (job.project / folder).mkdir()
    (job.project / "config" / "prod.yaml").write_text("debug: false\n")
    (job.project / "config" / "dev.yaml").write_text("debug: false\n")
    (job.project / "tools" / "gen.py").write_text(GEN)
    result = run_as_claude_code(inproc_modes, payload, job, "python3 tools/gen.py")
    assert not result.denied, result.reason
    assert (job.project / "config" / "dev.yaml").read_text() == "debug: true\n"  # what no rule covers: written
    assert (job.project / "src" / "out.txt").read_text() == "debug: true\n"
    prod, new = (job.project / "config" / "prod.yaml").read_text(), job.project / "config" / "prod-eu.yaml"
    if inproc_modes.sandboxed:  # type: ignore[attr-defined]
        assert prod == "debug: false\n" and not new.exists()
        assert "config/prod-eu.yaml" in str([e.get("undone") for e in job.events()])
    else:  # without the sandbox, reading the command cannot see this (README: Where no sandbox can run)
        assert prod == "debug: true\n" and new.exists()


def test_a_command_that_names_a_covered_file_is_refused_in_both_modes(inproc_modes: Hook, job: JobDir,
                                                                      payload: Payloads) -> None:
    job.plan({"rules": [RULE], "steps": ["build"]})
    (job.project / "config").mkdir()
    (job.project / "config" / "prod.yaml").write_text("debug: false\n")
    result = run_as_claude_code(inproc_modes, payload, job, "echo 'debug: true' > config/prod.yaml")
    assert result.denied and result.reason.endswith("[baton:deny-content]"), result.reason
    assert (job.project / "config" / "prod.yaml").read_text() == "debug: false\n"


def test_external_operations_are_counted_when_the_sandbox_lets_them_run(hook: Hook, job: JobDir,
                                                                        payload: Payloads) -> None:
    job.plan({"limits": {"external_ops": 2}, "steps": ["build"]})
    first = hook("PreToolUse", bash(payload, "curl -s https://example.com/a && curl -s https://example.com/b"))
    assert not first.denied and job.counters()["external_ops"] == 2
    if hook.sandboxed:  # type: ignore[attr-defined]
        assert first.decision in ("allow", "ask") and hookkit.sandbox_original(first.command)
    refused = hook("PreToolUse", bash(payload, "curl -s https://example.com/c"))
    assert refused.denied and refused.reason.endswith("[baton:external-ops]"), refused.reason
    assert not hook("PreToolUse", bash(payload, "ls")).denied and job.counters()["external_ops"] == 2
