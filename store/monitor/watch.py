"""What the session hooks do for the job's figures: note a session's start and end, catch the
figures up with the session's transcripts at each Stop, keep the token and cost totals the limits
read, and find the alerts that only the figures can tell (cost trend, limits, no progress).

Everything here runs under ``hooks.lock`` and never touches the network.
"""

from __future__ import annotations

import os
import time

from store.base import durable
from store.monitor import alerts, limits
from store.monitor.alerts import Alert
from store.monitor.counters import read_counters, save_counters
from store.state.journal import now_iso
from store.state.location import HOOKS_LOCK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from store.state.job import Job
    from store.state.location import Layout


def transcript_of(value: Any) -> str:
    """A transcript path from a payload: absolute, or nothing."""
    return value if isinstance(value, str) and os.path.isabs(value) else ""


def session_started(layout: Layout, session: str, transcript: str, source: str) -> List[str]:
    """Note the start; return what alerts still wait to be told to the model."""
    from store.monitor.outcomes import append_event

    os.makedirs(layout.state_dir, exist_ok=True)
    with durable.locked(layout.file(HOOKS_LOCK)):
        append_event(layout, {"kind": "session", "event": "start", "ts": now_iso(), "session": session,
                              "source": source[:20], "transcript": transcript})
        counters = read_counters(layout)
        pending = alerts.take_pending(counters)
        if pending:
            save_counters(layout, counters)
    return pending


def command_answered(layout: Layout, session: str, command: str) -> None:
    """Note that the session's prompt was a baton command answered without a model, so a session
    that did nothing else is not shown as one that worked."""
    from store.monitor.outcomes import append_event

    with durable.locked(layout.file(HOOKS_LOCK)):
        append_event(layout, {"kind": "session", "event": "command", "ts": now_iso(), "session": session,
                              "command": command[:40]})


def note_totals(counters: Dict[str, Any], fig: Dict[str, Any]) -> None:
    """The totals the job limits read: tokens summed from transcripts, dollars reported."""
    from store.monitor import costs

    counters["tokens"] = sum(fig["tokens"])
    counters["cost_usd"] = costs.reported_usd(costs.session_costs(fig["sessions"]).values()) or 0.0
    counters.pop("transcripts", None)  # offsets now live with the figures


def catch_up(job: Job, counters: Dict[str, Any], session: str, transcript: str) -> Dict[str, Any]:
    """Fold what the session (and the ledger, and the events) added; save; update ``counters``.
    The caller holds ``hooks.lock``."""
    from store.monitor import figures  # not on SessionStart's path, which only notes the start

    fig = figures.load(job.layout, lazy=bool(session))  # a hook decodes only what its fold changes
    fig = figures.catch_up(fig, job.layout, job.plan, {session} if session else None,
                           {session: transcript} if transcript else None)
    figures.save(job.layout, fig)
    note_totals(counters, fig)
    return fig


def conditions(job: Job, counters: Dict[str, Any], fig: Optional[Dict[str, Any]]) -> List[Alert]:
    """The figure-based conditions that hold now: limits reached, no progress in time, cost."""
    step = job.next.id if job.next else ""
    holding = alerts.limits_hit(limits.reached(job.plan.limits, job.snap, counters), step) if step else []
    if fig is not None:
        progress_at = fig["progress"] if fig["progress"] is not None else fig["first"]
        late = alerts.no_progress(job.plan.limits, progress_at, job.snap.progress_seq, step, time.time())
        holding += [late] if late else []
        if fig["steps"] and (job.plan.limits.get("cost_usd") or len(fig["status"]) >= 2):
            holding += cost_conditions(cost_outlook(job, fig))
    alerts.settle(counters, holding, "limit:", "cost-")
    return holding


def raise_fresh(job: Job, counters: Dict[str, Any], holding: List[Alert], session: str) -> List[Alert]:
    """Mark and log the alerts among ``holding`` not raised before; the caller holds the lock."""
    now = now_iso()
    new = alerts.fresh(counters, holding, now)
    if new:  # outcomes (the events file's writer) only then: most stops raise nothing
        from store.monitor.outcomes import append_event

        for line in alerts.lines(new, session, now):
            append_event(job.layout, line)
    return new


def cost_outlook(job: Job, fig: Mapping[str, Any]) -> Dict[str, Any]:
    """Just what the cost alerts read (NEXT, the job's cost and projection, the cost of each done
    step), as ``baton status`` computes them but without the rest of its document: a Stop hook
    computes it every turn."""
    from store.monitor import costs
    from store.monitor.fold import weight

    session_costs = costs.session_costs(fig["sessions"])
    rate = costs.rate_of(session_costs)
    done, left = [], 0
    for step in job.plan.steps:
        info = job.snap.steps.get(step.id, {})
        status = info.get("status", "pending")
        left += status not in ("done", "skipped")
        if status == "done":
            entry = fig["steps"].get(step.id) or {}
            shares = {sid: weight(counts[:4]) for sid, counts in (entry.get("by") or {}).items()}
            done.append((str(info.get("ts") or ""), costs.step_cost(shares, session_costs, rate)["estimated"],
                         weight(entry.get("tokens") or [0, 0, 0, 0])))
    cost, per_step, in_usd = costs.outlook(session_costs, rate, done, left, job.plan.limits.get("cost_usd"))
    return {"next": job.next.id if job.next else None, "cost": cost, "per_step": per_step, "in_usd": in_usd}


def cost_conditions(data: Mapping[str, Any]) -> List[Alert]:
    """The cost alerts that hold, from :func:`cost_outlook`."""
    from store.monitor import costs

    out = []
    cost, step = data["cost"], str(data.get("next") or "")
    limit, projected = cost.get("limit_usd"), cost.get("projected_usd")
    if limit and projected is not None and projected > limit:
        spent = cost.get("estimated_usd") or 0.0
        out.append(Alert("cost-projected", "cost-projected", step,
                         f"baton: at this rate the job will cost about ${projected:.2f}, over its limit of "
                         f"${limit:.2f} (${spent:.2f} so far). Work economically; tell the person.",
                         f"projected cost ${projected:.2f} exceeds limits.cost_usd ${limit:.2f} "
                         f"(${spent:.2f} spent, ${cost.get('per_done_step_usd') or 0:.2f} per done step)"))
    per_step, in_usd = data["per_step"], data["in_usd"]
    times = costs.rising(per_step)
    if times is not None:
        unit = "cost" if in_usd else "weighted tokens"
        out.append(Alert("cost-rising", "cost-rising", step,
                         f"baton: the last {costs.RECENT_STEPS} steps each used {times:.1f}x the job's average "
                         f"{unit} per step. Check whether the work is going in circles.",
                         f"the last {costs.RECENT_STEPS} done steps used {times:.1f}x the job's average {unit} "
                         f"per step"))
    return out


def session_ended(layout: Layout, session: str, transcript: str, reason: str) -> None:
    """Note the end. The rest (folding the cost Claude Code wrote just before, raising alerts,
    exporting) runs detached: Claude Code gives a plugin's SessionEnd hook about 1.5 s."""
    from store.monitor.outcomes import append_event

    os.makedirs(layout.state_dir, exist_ok=True)
    with durable.locked(layout.file(HOOKS_LOCK)):
        append_event(layout, {"kind": "session", "event": "end", "ts": now_iso(), "session": session,
                              "reason": reason[:40], "transcript": transcript})


def settle(job: Job, person_sees: bool = False) -> Tuple[Dict[str, Any], List[Alert]]:
    """Catch the figures up with everything and raise the conditions that hold (for ``baton status``
    and after a session ended). Alerts go to the model at its next hook, and to the person at the
    next hook that can show them unless ``person_sees`` (the caller shows them)."""
    layout = job.layout
    with durable.locked(layout.hooks_lock):
        counters = read_counters(layout)
        fig = catch_up(job, counters, "", "")
        new = raise_fresh(job, counters, conditions(job, counters, fig), "")
        alerts.defer(counters, new, person=not person_sees)
        save_counters(layout, counters)
    return fig, new
