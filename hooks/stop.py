"""Stop: while NEXT exists, send the agent back with the NEXT line, within baton's own budget.

Not while a background subagent still runs: the session is not over then (see ``store.monitor.loop``).
The agent is sent back through ``additionalContext``, which Claude Code gives the model as "Stop hook
additional context: <reason>" and shows the person as "Stop hook says: <reason>"; a ``decision:
block`` would also send the model the hook's whole command line and show the person "Stop hook
reported a problem". Alerts for the person go in ``systemMessage``, which the terminal shows; the
export runs detached (``store.monitor.launch``). When baton cannot write its bookkeeping (full
disk, read-only ``.baton/``), the decision is made from what can be read, the person is told, and
``stop_hook_active`` bounds the loop, since no continuation can be counted: at most one per stop.
While baton is still reading a long ledger without its snapshot (``store.state.resume``) NEXT is
not known: the session may stop, and nothing is recorded or counted.
"""

from __future__ import annotations

from hooks.context import env_for, layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

    from store.state.job import Job


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
    if not layout.has_plan():
        return None
    from store.monitor import loop
    from store.state.job import Job

    transcript = payload.get("transcript_path")
    job = Job(layout, env_for(payload, env), fresh=False)
    if job.reading:  # NEXT is not known yet: nothing to send the agent back to, and nothing is recorded
        return None
    try:
        answer = loop.stop(job, session_of(payload, env), transcript if isinstance(transcript, str) else "",
                           running_in_background(payload))
    except OSError as exc:
        from store.base.errors import unwritable

        if not unwritable(exc):
            raise
        return _without_bookkeeping(job, payload, exc)
    out: Dict[str, Any] = _continue(answer.reason) if answer.reason else {}
    if answer.person:
        out["systemMessage"] = answer.person
    if env.get("BATON_TELEMETRY"):  # the export's modules (and pathlib, which the sender loads) only when it is on
        from store.monitor import launch, telemetry

        if telemetry.enabled(env):
            launch.kick(layout, env)
    return out or None


def _continue(reason: str) -> Dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}}


def _without_bookkeeping(job: Job, payload: Mapping[str, Any], exc: OSError) -> Dict[str, Any]:
    """The Stop answer when counters and records cannot be written: continue once while NEXT is open."""
    from hooks.adapter import cannot_write
    from store.base.errors import describe
    from store.monitor import limits
    from store.monitor.counters import read_counters

    nxt = job.next
    hit = limits.reached(job.plan.limits, job.snap, read_counters(job.layout))
    answer = cannot_write("Stop", exc, f"the session's stop could not be counted; NEXT is {nxt.id if nxt else 'none'}")
    if nxt is None or running_in_background(payload) or job.waiting_for_approval() or hit \
            or payload.get("stop_hook_active") is True:
        return answer
    line = f"NEXT: {nxt.id}" + (f" - {nxt.title}" if nxt.title else "")
    return {**answer, **_continue(
        f"{line}\nThe job is not finished: do NEXT, then `baton record {nxt.id} done \"<what>\"`. baton cannot save "
        f"its state right now ({describe(exc)}), so if recording fails, tell the person and stop.")}
