"""PreToolUse (Write, Edit, NotebookEdit, Bash, Skill, CronCreate, ScheduleWakeup, WebFetch, MCP tools): the gate.

Denies with a reason written for the model, or prints nothing and lets Claude Code's own
permission flow go on. While a job is active, a Bash call that passes is handed back to run in
baton's sandbox, with ``allow`` or ``ask`` decided from the person's own permission rules
(:mod:`store.gate.enforce`); that is the only time it answers anything but "deny".
"""

from __future__ import annotations

import os

from hooks.adapter import PayloadError, deny
from hooks.context import env_for, layout_for
from store.gate import policy
from store.gate.call import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise PayloadError("tool_name or tool_input missing or of the wrong type")
    layout = layout_for(payload, env)
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else layout.project_dir
    home = env.get("HOME") or os.path.expanduser("~")
    call = Call(tool, tool_input, cwd, layout.project_dir, layout.state_dir, home, env)
    if not layout.has_plan():
        reason = policy.decide(call, None, None, None)
    else:
        from store.state import leases
        from store.state.job import Job  # only where there is a job

        job = Job(layout, env_for(payload, env), fresh=False)
        leases.renew(layout, job.snap, job.worker)
        read_only = policy.read_only_reason(job, call)
        if tool == "Bash" and isinstance(tool_input.get("command"), str) and "\x00" not in tool_input["command"]:
            from store.gate import enforce

            return enforce.bash(call, job, read_only, payload)
        reason = policy.decide(call, job.plan, job.next, read_only)
        if reason is None and call.external:
            reason = policy.count_external(job, call)
    return deny(reason) if reason else None
