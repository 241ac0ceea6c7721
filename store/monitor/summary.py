"""The job's figures as ``baton status --json`` gives them (schema ``baton.status``, version 1):
progress, time, turns, tokens, cost, tool outcomes, retries, turns an API error ended, approval
waits, changed files, validation, artifacts, every step with its attempts, every session, and the alerts raised.

Built from the plan, the snapshot and the caught-up figures; read by the dashboard, the report,
the alerts and the OpenTelemetry export, so all of them say the same thing.
"""

from __future__ import annotations

import os
import time

from store.monitor import costs, sessions
from store.monitor.clock import epoch
from store.monitor.fold import weight
from store.monitor.sessions import tokens_of, when
from store.monitor.transcript import KINDS
from store.state.brief import progress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

    from store.plan.plan import Step
    from store.state.job import Job

SCHEMA, VERSION = "baton.status", 1


def job_id(job: Job) -> str:
    """The job's id in exports: the plan's ``job``, else the project folder's name."""
    return job.plan.job or os.path.basename(os.path.abspath(str(job.layout.project))) or "job"


def _attempts(fig: Mapping[str, Any], step_id: str, entry: Mapping[str, Any], views: Mapping[str, Mapping[str, Any]],
              waits: Sequence[Tuple[float, float]]) -> List[Dict[str, Any]]:
    """The step's attempts: each recorded one, and the work of a session that spent tokens or tool
    calls on the step and ended without recording it (left running, or still open)."""
    out = []
    for bar in entry.get("bars", ()):
        sid, start, end, outcome, number = bar[:5]
        if end is None and views.get(sid, {}).get("ended", "open") != "open":
            outcome, end = "left", max(epoch(views[sid].get("end")) or start, start)
        kept = bar[5] if len(bar) > 5 else ()  # the notes of its records (figures before version 3: none)
        notes = [{"status": status, "ts": when(t), "note": note} for status, t, note in kept]
        out.append({"n": number, "session": sid or None, "start": when(start), "end": when(end), "outcome": outcome,
                    "notes": notes})
    recorded = {bar[0] for bar in entry.get("bars", ())}
    for sid, counts in (entry.get("by") or {}).items():
        view = views.get(sid)
        if sid in recorded or view is None or not (sum(counts[:4]) or counts[4]):
            continue
        end = epoch(view["end"]) if view["ended"] != "open" else None
        if end is not None and any(a <= end <= b for a, b in waits):
            continue  # the session ended while the step waited for a person: nothing was left running
        since = max((t for t, s in fig["history"] if s == step_id and (end is None or t <= end)), default=None)
        start = max(x for x in (since, epoch(view["start"]), 0.0) if x is not None)
        out.append({"n": 0, "session": sid, "start": when(start),
                    "end": when(end), "outcome": "left" if end is not None else "running", "notes": []})
    return sorted(out, key=lambda a: (a["start"] or "", a["end"] or "~"))


def _step(job: Job, fig: Mapping[str, Any], plan_step: Step, views: Mapping[str, Mapping[str, Any]],
          session_costs: Mapping[str, costs.SessionCost], rate: Optional[float], now: float) -> Dict[str, Any]:
    step_id = plan_step.id
    info = job.snap.steps.get(step_id, {})
    entry = fig["steps"].get(step_id) or {}
    shares = {sid: weight(counts[:4]) for sid, counts in (entry.get("by") or {}).items()}
    share = costs.step_cost(shares, session_costs, rate)
    waits = [(s, e) for sid, s, e in fig["waits"] if sid == step_id]
    if job.next is not None and job.next.id == step_id and job.waiting_for_approval():
        since = fig["next"][1] if fig["next"][1] is not None else fig["first"]
        waits += [(since, now)] if since is not None else []
    attempts = _attempts(fig, step_id, entry, views, waits)
    wait = float(entry.get("wait") or 0.0) + (max(now - waits[-1][0], 0.0) if waits and waits[-1][1] == now else 0.0)
    attempts += [{"n": 0, "session": None, "start": when(s), "end": when(e) if e != now else None,
                  "outcome": "waiting", "notes": []} for s, e in waits]
    attempt = int(info.get("attempt") or 0)
    return {"id": step_id, "title": plan_step.title, "phase": plan_step.phase,
            "status": info.get("status", "pending"), "attempt": attempt, "ts": info.get("ts"),
            "note": info.get("note", ""), "approval": plan_step.needs_approval,
            "approved": job.approved(step_id), "retries": max(attempt - 1, 0),
            "calls": int(entry.get("calls") or 0), "failures": int(entry.get("failures") or 0),
            "last_error": entry.get("error") and _error(entry["error"]), "refusals": int(entry.get("refusals") or 0),
            "changed_files": int(entry.get("changed") or 0), "tokens": tokens_of(entry.get("tokens") or [0, 0, 0, 0]),
            "cost_usd": share["reported"], "cost_estimated_usd": share["estimated"],
            "approval_wait_s": round(wait, 3), "validation": entry.get("validation"),
            "artifacts": list(entry.get("artifacts") or []), "attempts": attempts}


def _error(error: Mapping[str, Any]) -> Dict[str, Any]:
    return {**error, "ts": when(error.get("ts"))}


def _limits(job: Job, data: Mapping[str, Any], fig: Mapping[str, Any], now: float) -> Dict[str, Any]:
    from store.monitor.outcomes import read_counters

    counters = read_counters(job.layout)
    progress_at = fig["progress"] if fig["progress"] is not None else fig["first"]
    values: Dict[str, Any] = {
        "tool_calls": data["tools"]["calls"], "turns": int(counters.get("turns", 0)),
        "tokens": data["tokens"]["total"], "cost_usd": _spent(data["cost"]["reported_usd"], job.snap.session_cost_usd),
        "wall_minutes": None if data["duration"]["wall_s"] is None else data["duration"]["wall_s"] / 60,
        "no_progress_minutes": None if progress_at is None else max(now - progress_at, 0.0) / 60,
        "changed_files": int(counters.get("changed_count", 0)),
    }
    return {name: {"limit": cap, "value": values.get(name)} for name, cap in job.plan.limits.items()}


def _spent(reported: Optional[float], recorded: float) -> Optional[float]:
    """The cost ``limits.cost_usd`` is checked against (as :func:`store.monitor.limits.reached` does):
    the figures' reported cost, or the ledger's ``session`` records when they say more."""
    return max(reported or 0.0, recorded) if reported is not None or recorded else None


def summarize(job: Job, fig: Mapping[str, Any], last: Sequence[Mapping[str, Any]] = (),
              now: Optional[float] = None) -> Dict[str, Any]:
    """The whole status document for ``job`` with figures ``fig`` (caught up by the caller)."""
    now = time.time() if now is None else now
    session_costs = costs.session_costs(fig["sessions"])
    rate = costs.rate_of(session_costs)
    session_views = sessions.views(fig, session_costs)
    by_id = {v["id"]: v for v in session_views}
    steps = [_step(job, fig, step, by_id, session_costs, rate, now) for step in job.plan.steps]
    prog = progress(job.plan, job.snap, job.worker)
    counts = {k: sum(1 for s in steps if s["status"] == k) for k in ("done", "skipped", "failed", "running", "pending")}
    done = [(str(s["ts"] or ""), s["cost_estimated_usd"], weight([s["tokens"][k] for k in KINDS]))
            for s in steps if s["status"] == "done"]
    cost = costs.outlook(session_costs, rate, done, len(steps) - counts["done"] - counts["skipped"],
                         job.plan.limits.get("cost_usd"))[0]
    first = epoch(job.snap.first_ts)
    current = job.next
    data: Dict[str, Any] = {
        "schema": SCHEMA, "version": VERSION, "generated": when(now), "job": job.plan.job, "job_id": job_id(job),
        "total": len(steps), "done": len(prog.done), "next": current.id if current else None,
        "phase": current.phase if current else None, "running": list(prog.running), "records": job.snap.seq,
        "torn_bytes": job.torn, "problems": list(job.snap.problems), "counts": counts,
        "current": _current(job, fig, steps),
        "duration": {"first_record": job.snap.first_ts or None,
                     "wall_s": None if first is None else max(now - first, 0.0),
                     "active_s": round(sum(float(e.get("active") or 0.0) for e in fig["sessions"].values()), 3),
                     "last_activity": when(fig["last"])},
        "turns": int(fig["turns"]), "tokens": tokens_of(fig["tokens"]), "cost": cost,
        "tools": {"calls": int(fig["calls"]), "failures": int(fig["failures"]), "refusals": dict(fig["refusals"]),
                  "last_error": fig["error"] and _error(fig["error"])},
        "retries": sum(s["retries"] for s in steps),
        "api_errors": {"turns": int(fig.get("api_errors") or 0),
                       "last": fig.get("api_error") and _error(fig["api_error"])},
        "approval_wait_s": round(sum(s["approval_wait_s"] for s in steps), 3),
        "changed_files": sum(s["changed_files"] for s in steps),
        "validation": {k: sum(1 for s in steps if s["validation"] == k) for k in ("passed", "failed")},
        "artifacts": sum(len(s["artifacts"]) for s in steps),
        "steps": steps, "sessions_total": sessions.count(fig), "sessions": session_views,
        "alerts": [{k: a.get(k) for k in ("ts", "alert", "step", "session", "message")} for a in fig["alerts"]],
        "alerts_total": int(fig["alerts_total"]), "last": list(last),
        "failure_times": [{"ts": when(t), "session": sid or None, "step": step or None}
                          for t, sid, step in fig["marks"]],
        "once": once(job, fig), "refused": refused(fig, str(job.layout.project)), "approvals": approvals(fig),
        "partial": job.partial,
    }
    data["limits"] = _limits(job, data, fig, now)
    return data


def once(job: Job, fig: Mapping[str, Any]) -> Dict[str, Any]:
    """``baton once`` side effects: how many results stand, the intents still open (running now, or
    unknown until settled), oldest first, and the latest intents and results in order."""
    snap = job.snap
    names = ("ts", "key", "status", "step", "session", "outcome", "exit", "id", "note", "settles")
    return {"results": snap.once_results,
            "open": [{"key": k, **v} for k, v in sorted(snap.once_open.items(), key=lambda kv: kv[1]["seq"])],
            "records": [{**dict(zip(names, item)), "ts": when(item[0]), "session": item[4] or None}
                        for item in fig.get("effects") or ()]}


def refused(fig: Mapping[str, Any], project: str) -> List[Dict[str, Any]]:
    """The latest tool calls the gate refused: when, in which session and step, the code, the tool,
    what it was asked to do (a path inside the project relative to it) and the reason the model
    was given."""
    names = ("ts", "session", "step", "code", "tool", "target", "reason")
    inside = project.rstrip(os.sep) + os.sep
    return [{**dict(zip(names, item)), "ts": when(item[0]), "session": item[1] or None, "step": item[2] or None,
             "target": item[5][len(inside):] if item[5].startswith(inside) else item[5]}
            for item in fig.get("refused") or ()]


def approvals(fig: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The latest approvals: when, the step, the session whose prompt gave it, the person's note."""
    names = ("ts", "step", "session", "note", "by", "via")
    return [{**dict(zip(names, item)), "ts": when(item[0]), "session": item[2] or None}
            for item in fig.get("approvals") or ()]


def _current(job: Job, fig: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    nxt = job.next
    if nxt is None:
        return None
    mine = next(s for s in steps if s["id"] == nxt.id)
    work = [a for a in mine["attempts"] if a["outcome"] != "waiting"]
    since = work[-1]["start"] if work and work[-1]["end"] is None else when(fig["next"][1])
    return {"step": nxt.id, "title": nxt.title, "phase": nxt.phase, "attempt": mine["attempt"] + (
        0 if mine["status"] == "running" else 1), "since": since, "waiting_for_approval": job.waiting_for_approval()}
