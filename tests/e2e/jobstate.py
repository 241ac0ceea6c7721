"""A baton job on disk, as end-to-end tests set it up and inspect it.

`write_plan()` puts a plan in `<project>/.baton/plan.json`; `ledger()` reads `steps.jsonl` back;
`baton()` runs the plugin copy's own CLI in the project as a person in a terminal would (with the
HOME the CLI runs give hooks, so approvals are checked with the same key). `results_by_id()`
pairs the tool calls in a logged request with what the model got back, and `gate_denied()`
tells a refusal by baton's PreToolUse gate. `Turns` is a FakeAPI script for one CLI run of
several in a test (a plain list would go on counting turns from the earlier runs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from .fakeapi import EXHAUSTED_TEXT
from .messages_api import Block, ToolResult, text, tool_results

STATE = ".baton"
GATE_DENIAL = re.compile(r"(PreToolUse:\w+ hook error: )?baton denied ")


def write_plan(project: Path, plan: dict[str, Any]) -> Path:
    """Write `plan` as the project's `.baton/plan.json` and return its path."""
    path = project / STATE / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=2) + "\n")
    return path


def ledger(project: Path) -> list[dict[str, Any]]:
    """Every record of the project's ledger, in order (empty when there is none)."""
    path = project / STATE / "steps.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def baton(plugin: Path, project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `<plugin>/bin/baton ARGS` in `project` with `home` as HOME and no CLAUDE* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "BATON_"))}
    env.pop("XDG_CONFIG_HOME", None)
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, str(plugin / "bin" / "baton"), *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )


def results_by_id(request: dict[str, Any]) -> dict[str, ToolResult]:
    """The tool_result blocks of a logged request, keyed by the tool_use id they answer."""
    return {result.tool_use_id: result for result in tool_results(request)}


def gate_denied(result: ToolResult) -> bool:
    """True when baton's PreToolUse gate refused the call `result` answers.

    The CLI (2.1.328) gives the model the hook's `permissionDecisionReason` as the tool_result
    text, marked is_error: bare for Write, after "PreToolUse:Bash hook error: " for Bash.
    """
    return result.is_error and GATE_DENIAL.match(result.text) is not None


class Turns:
    """A callable FakeAPI script for one conversation: these turns in order, then EXHAUSTED_TEXT."""

    def __init__(self, *turns: list[Block]) -> None:
        self.turns = list(turns)
        self.served = 0

    def __call__(self, body: dict[str, Any]) -> list[Block]:
        if self.served >= len(self.turns):
            return [text(EXHAUSTED_TEXT)]
        self.served += 1
        return self.turns[self.served - 1]
