"""The PreToolUse decision: may this tool call run while the job's NEXT step is what it is?

``decide`` returns ``None`` to let Claude Code's own permission flow go on, or a reason to deny,
written for the model: what was refused, why, and what it may do instead. Order of checks:
unknown payload shape; baton's own files and the plan's ``protect`` globs (always); the job's
``rules``; a step waiting for a person's approval (reading only); the step's ``tools``; the step's
``writes`` (Write/Edit/NotebookEdit by path, Bash by static analysis plus the step's ``bash``
patterns). Phase defaults are in :data:`PHASE_DEFAULTS`.
"""

from __future__ import annotations

import fnmatch
import os
import re

from store.gate import scope
from store.state import approvals
from store.state.plan import Plan, Step

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
SCHEDULERS = ("CronCreate", "ScheduleWakeup")
TEST_COMMANDS = ("pytest*", "python -m pytest*", "python3 -m pytest*", "npm test*", "npm run test*",
                 "yarn test*", "pnpm test*", "make test*", "make check*", "go test*", "cargo test*",
                 "tox*", "nox*", "ruff*", "mypy*")
# phase -> defaults for fields the step leaves out (README: "Phases")
PHASE_DEFAULTS: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "discovered": {"writes": ()},
    "planned": {"writes": ()},
    "approved": {"writes": ()},
    "implemented": {},
    "validated": {"writes": (), "bash": TEST_COMMANDS},
    "published": {},
}
BATON_READ = ("brief", "status", "log", "verify", "plan", "--help", "--version")
BATON_WRITE = ("record",)
CHAINING = re.compile(r"[;&|<>`\n\r]|\$\(")


class Rules:
    """A step's effective policy: explicit fields, then its phase's defaults."""

    def __init__(self, step: Optional[Step]) -> None:
        self.step = step
        self.tools: Optional[Tuple[str, ...]] = self._pick("tools")
        self.writes: Optional[Tuple[str, ...]] = self._pick("writes")
        self.bash: Tuple[str, ...] = self._pick("bash") or ()

    def _pick(self, name: str) -> Optional[Tuple[str, ...]]:
        explicit: Optional[Tuple[str, ...]] = getattr(self.step, name) if self.step else None
        if explicit is not None:
            return explicit
        return PHASE_DEFAULTS.get(self.step.phase or "", {}).get(name) if self.step else None


class Call:
    """What the gate knows about one tool call."""

    def __init__(self, tool: str, tool_input: Mapping[str, Any], cwd: str, project: str, state_dir: str,
                 home: str, env: Mapping[str, str]) -> None:
        self.tool, self.input, self.cwd, self.home, self.env = tool, tool_input, cwd, home, env
        self.project = os.path.realpath(project)
        self.state_dirs = (state_dir, os.path.realpath(state_dir))
        self.key_dirs = (approvals.key_dir(env), os.path.realpath(approvals.key_dir(env)))


def protected_reason(call: Call, real: str, raw_abs: str, plan: Optional[Plan]) -> Optional[str]:
    for path in (real, raw_abs):
        if any(scope.under(path, d) for d in call.state_dirs):
            return "it is inside .baton/, baton's own state; the ledger changes only through `baton record`"
        if any(scope.under(path, d) for d in call.key_dirs):
            return "it is baton's approval key; only a person approves steps, with /baton:approve"
    if plan and plan.protect and scope.allowed(real, call.project, call.home, plan.protect):
        return "the plan's `protect` list covers it"
    return None


def mentions_protected(call: Call, command: str) -> Optional[str]:
    folded = scope.fold(command)
    if ".baton" in folded or "baton/approval" in folded or approvals.KEY_NAME in folded:
        return "the command names baton's own files (.baton/ or the approval key), which no tool may touch"
    return None


def _write_target(call: Call, raw: str, plan: Optional[Plan], rules: Rules) -> Optional[str]:
    real = scope.resolve(raw, call.cwd, call.home)
    raw_abs = os.path.normpath(os.path.join(call.cwd, raw))
    why = protected_reason(call, real, raw_abs, plan)
    if why:
        return f"baton denied writing {raw}: {why}."
    if rules.writes is not None and not scope.allowed(real, call.project, call.home, rules.writes):
        allowed = ", ".join(rules.writes) or "nothing"
        shown = scope.relative(real, call.project)
        where = f"{shown} (resolved)" if shown is not None else f"{real}, outside the project"
        return (f"baton denied writing {where}: step {step_name(rules)} may write only {allowed}. Write inside "
                "those paths, or finish this step and record it (`baton record STEP done`) first.")
    return None


def step_name(rules: Rules) -> str:
    return rules.step.id if rules.step else "?"


def decide(call: Call, plan: Optional[Plan], next_step: Optional[Step], read_only: Optional[str]) -> Optional[str]:
    """``None`` to allow, else the reason to deny. ``read_only``: why only reading is allowed now
    (NEXT waits for a person's approval, a job limit is reached), or ``None``."""
    rules = Rules(next_step)
    if call.tool in WRITE_TOOLS:
        return _decide_write(call, plan, rules, read_only)
    if call.tool == "Bash":
        from store.gate.bash import decide_bash

        return decide_bash(call, plan, rules, read_only)
    if call.tool == "Skill":
        name = call.input.get("skill") if isinstance(call.input, dict) else None
        if not isinstance(name, str):
            return "baton denied this Skill call: its input has no skill name, so it cannot be checked."
        if name.strip().lstrip("/").lower().startswith("baton:approve"):
            return "baton denied /baton:approve: only a person may approve a step, by typing it in the prompt."
        return _tools_check(call, rules)
    if call.tool == "Read":
        raw = call.input.get("file_path")
        if not isinstance(raw, str):
            return "baton denied this Read: it has no file_path, so it cannot be checked."
        real = scope.resolve(raw, call.cwd, call.home)
        if any(scope.under(path, d) for path in (real, raw) for d in call.key_dirs):
            return "baton denied reading baton's approval key: only a person approves steps, with /baton:approve."
        return None
    if call.tool in SCHEDULERS:
        text = scope.fold(repr(call.input))
        if "approve" in text and "baton" in text:
            return "baton denied scheduling an approval: only a person may approve a step, by typing it."
        return _tools_check(call, rules)
    return _tools_check(call, rules)


def _tools_check(call: Call, rules: Rules) -> Optional[str]:
    if rules.tools is not None and call.tool not in rules.tools:
        return (f"baton denied {call.tool}: step {step_name(rules)} allows only the tools "
                f"{', '.join(rules.tools) or '(none)'}. Use one of those, or record the step when it is done.")
    return None


def _decide_write(call: Call, plan: Optional[Plan], rules: Rules, read_only: Optional[str]) -> Optional[str]:
    raw = call.input.get(WRITE_TOOLS[call.tool]) if isinstance(call.input, dict) else None
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        return f"baton denied {call.tool}: the call has no usable path, so it cannot be checked."
    protected = _write_target(call, raw, plan, Rules(None))
    if protected:
        return protected
    if read_only:
        return f"baton denied {call.tool} on {raw}: {read_only}"
    return _tools_check(call, rules) or _write_target(call, raw, plan, rules)


def waiting_reason(step: Step) -> str:
    return (f"step {step.id} waits for a person's approval, and until then only reading is allowed. Stop "
            f"and ask the person to type /baton:approve {step.id}; do not try to approve it yourself.")


def limit_reason(hit: Sequence[str]) -> str:
    return (f"the job reached its limit ({', '.join(hit)}), so only reading is allowed. Stop and report "
            "to the person; they can raise the limit in .baton/plan.json.")


def matches_any(command: str, patterns: Sequence[str]) -> bool:
    """``command`` (whitespace collapsed) matches a pattern and chains nothing else."""
    flat = " ".join(command.split())  # look for chaining before collapsing: a newline separates commands
    return not CHAINING.search(command) and any(fnmatch.fnmatchcase(flat, p) for p in patterns)
