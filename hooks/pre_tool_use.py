"""PreToolUse (the tools of ``store.gate.toolset.GATED``, WebFetch, MCP tools, Read of the key): the gate.

Denies with a reason written for the model, or prints nothing and lets Claude Code's own
permission flow go on. While a job is active, a Bash call (or a Monitor's command) that passes is
handed back to run in baton's sandbox, with ``allow`` or ``ask`` decided from the person's own
permission rules (:mod:`store.gate.enforce`). In a ``baton run`` session a call that waits for a
person's approval is parked (``defer``) instead of refused (:mod:`store.gate.parking`).
"""

from __future__ import annotations

import os

from hooks.adapter import PayloadError, deny
from hooks.context import env_for, layout_for
from store.gate import policy, toolset
from store.gate.call import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple

    from store.state.job import Job


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
        from store.state.job import PARK_APPROVALS, Job  # only where there is a job

        job = Job(layout, env_for(payload, env), fresh=False)
        leases.renew(layout, job.snap, job.worker)
        read_only = policy.read_only_reason(job, call)
        park = env.get(PARK_APPROVALS) == "1" and _parks(read_only, job, payload, env)
        command = toolset.command_of(tool, tool_input)
        if command is not None and "\x00" not in command:  # Bash, or a Monitor's command: run in the sandbox
            from store.gate import enforce

            answer = enforce.bash(call, job, read_only, payload, parking=park)
        else:
            reason = policy.decide(call, job.plan, job.next, read_only)
            if reason is None and call.external:
                reason = policy.count_external(job, call)
            answer = deny(reason) if reason else None
        if park and _refused(answer):
            from store.gate import parking

            return parking.park(job)
        return answer
    return deny(reason) if reason else None


def _parks(read_only: Optional[Tuple[str, str]], job: Job, payload: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether a refusal of this call is turned into a parked call (see :mod:`store.gate.parking`)."""
    if read_only is None or read_only[0] != "waiting":
        return False
    from store.gate import parking  # only in a baton run session, and only while NEXT waits

    return parking.enabled(env, job, payload)


def _refused(answer: Optional[Mapping[str, Any]]) -> bool:
    specific = (answer or {}).get("hookSpecificOutput")
    return isinstance(specific, dict) and specific.get("permissionDecision") == "deny"
