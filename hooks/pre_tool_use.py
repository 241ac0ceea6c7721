"""PreToolUse (Write, Edit, NotebookEdit, Bash, Skill, CronCreate, ScheduleWakeup): the gate.

Denies with a reason written for the model, or prints nothing and lets Claude Code's own
permission flow go on. It never answers "allow" (that would skip the person's permission prompt).
"""

from __future__ import annotations

import os

from hooks.adapter import PayloadError, deny
from hooks.context import layout_for
from store.gate import policy
from store.monitor import limits, outcomes
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def _already_changed(call: policy.Call, counters: Mapping[str, Any]) -> bool:
    """A Write or Edit of a file this step has already changed adds nothing to its count."""
    raw = call.input.get(policy.WRITE_TOOLS.get(call.tool, ""))
    if not isinstance(raw, str) or not raw:
        return False
    return outcomes.shown_path(os.path.join(call.cwd, raw), call.project) in counters.get("changed", ())


def _read_only_reason(job: Job, call: policy.Call) -> Optional[str]:
    nxt = job.next
    if nxt is not None and job.waiting_for_approval():
        return policy.waiting_reason(nxt)
    counters = outcomes.read_counters(job.layout)
    hit = limits.reached(job.plan.limits, job.snap, counters)
    if hit:
        return policy.limit_reason(hit)
    over = nxt is not None and limits.step_files_over(job.plan.limits, counters, nxt.id)
    if nxt is not None and over and not _already_changed(call, counters):
        cap = int(job.plan.limits["changed_files"])
        return (f"step {nxt.id} has already changed {cap} files, the job's changed_files limit. Record the "
                f"step (baton record {nxt.id} done \"<note>\") before changing more.")
    return None


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise PayloadError("tool_name or tool_input missing or of the wrong type")
    layout = layout_for(payload, env)
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else str(layout.project)
    home = env.get("HOME") or os.path.expanduser("~")
    call = policy.Call(tool, tool_input, cwd, str(layout.project), str(layout.root), home, env)
    if not layout.plan.exists():
        reason = policy.decide(call, None, None, None)
    else:
        job = Job(layout, env)
        reason = policy.decide(call, job.plan, job.next, _read_only_reason(job, call))
    return deny(reason) if reason else None
