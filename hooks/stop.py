"""Stop: while NEXT exists, send the agent back with the NEXT line, within baton's own budget.

Not while a background subagent still runs: the session is not over then (see ``store.monitor.loop``).
The agent is sent back through ``additionalContext``, which Claude Code gives the model as "Stop hook
additional context: <reason>" and shows the person as "Stop hook says: <reason>"; a ``decision:
block`` would also send the model the hook's whole command line and show the person "Stop hook
reported a problem".
"""

from __future__ import annotations

from hooks.context import layout_for, session_of
from store.monitor import loop
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def running_in_background(payload: Mapping[str, Any]) -> int:
    """Async subagents still running: Claude Code fires Stop while they run and wakes the session
    again with a task notification when each one finishes. (Other background tasks, such as a
    server started with Bash, may never finish, so they do not count.)"""
    tasks = payload.get("background_tasks")
    if not isinstance(tasks, list):
        return 0
    return sum(1 for t in tasks if isinstance(t, dict) and t.get("type") == "subagent" and t.get("status") == "running")


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.plan.exists():
        return None
    transcript = payload.get("transcript_path")
    reason = loop.decide(Job(layout, env), session_of(payload, env), transcript if isinstance(transcript, str) else "",
                         running_in_background(payload))
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}} if reason else None
