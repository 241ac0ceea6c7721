"""Text and JSON views of a job for ``status`` and ``log`` (people and programs, not the model)."""

from __future__ import annotations

from store.base.text import one_line
from store.state import leases, workers
from store.state.brief import ALL_DONE, progress
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List


def status_data(job: Job, last: List[Dict[str, Any]]) -> Dict[str, Any]:
    plan, snap, torn = job.plan, job.snap, job.torn
    prog = progress(plan, snap, job.worker)
    steps = []
    for step in plan.steps:
        info = snap.steps.get(step.id, {})
        steps.append({"id": step.id, "status": info.get("status", "pending"), "attempt": info.get("attempt", 0),
                      "ts": info.get("ts"), "note": info.get("note", ""),
                      "approval": step.needs_approval, "approved": job.approved(step.id)})
    return {"job": plan.job, "total": len(plan.steps), "done": len(prog.done),
            "next": prog.next.id if prog.next else None, "running": list(prog.running),
            "records": snap.seq, "torn_bytes": torn, "steps": steps, "last": last,
            "sessions": snap.sessions, "sessions_total": snap.sessions_total, "problems": snap.problems,
            **_parallel(job)}


def _parallel(job: Job) -> Dict[str, Any]:
    """What a parallel plan adds: who this is, what is ready, and every worker's lease."""
    if not job.plan.parallel:
        return {"parallel": False}
    rows = [{"worker": lease.worker, "step": lease.step, "since": lease.since, "idle_seconds": round(lease.idle),
               "lease_seconds_left": round(lease.left), "live": lease.left > 0} for lease in job.leases()]
    ready = [s.id for s in workers.ready(job.plan, job.snap)]
    return {"parallel": True, "worker": job.worker, "ready": ready, "workers": rows,
            "lease_minutes": leases.lease_seconds(job.plan) / 60, "database_problem": job.problem,
            "queued": job.queued}


def status_text(data: Dict[str, Any]) -> str:
    head = f"job {data['job']}: " if data["job"] else ""
    lines = [f"{head}{data['done']}/{data['total']} steps complete, {data['records']} ledger records",
             f"next: {_next(data)}", "steps:"]
    for s in data["steps"]:
        extra = f" attempt {s['attempt']}" if s["attempt"] else ""
        gate = " [needs approval]" if s["approval"] and not s["approved"] else ""
        note = f"  {one_line(s['note'], 60)}" if s["note"] else ""
        lines.append(f"  {s['status']:<8} {one_line(s['id'], 60)}{extra}{gate}{note}")
    if data["last"]:
        lines.append("last entries:")
        lines += ["  " + log_line(r) for r in data["last"]]
    sessions = data["sessions"]
    lines.append(f"sessions seen: {data['sessions_total']}" + (
        " (latest: " + ", ".join(s[:8] for s in sorted(sessions, key=lambda k: -sessions[k]["last"])[:5]) + ")"
        if sessions else ""))
    lines += [f"problem: {p}" for p in data["problems"]]
    if data.get("parallel"):
        lines += _workers_text(data)
    return "\n".join(lines)


def _workers_text(data: Dict[str, Any]) -> List[str]:
    lines = [f"workers ({len(data['workers'])} holding a step; leases of {data['lease_minutes']:g} minutes; "
             f"you are {one_line(data['worker'], 40)}):"]
    for w in data["workers"]:
        state = (f"active {w['idle_seconds']}s ago, {w['lease_seconds_left']}s of lease left" if w["live"]
                 else f"lease expired {-w['lease_seconds_left']}s ago: claimable again")
        lines.append(f"  {one_line(w['worker'], 40)}  {one_line(w['step'], 60)}  since {w['since']}  {state}")
    lines.append("ready: " + (", ".join(one_line(s, 40) for s in data["ready"][:20]) or "(none)"))
    if data.get("database_problem"):
        lines.append(f"database: {data['database_problem']} ({data['queued']} record(s) queued)")
    return lines


def _next(data: Dict[str, Any]) -> str:
    if data["next"] is not None:
        return str(data["next"])
    return ALL_DONE if data["done"] == data["total"] else "(no step claimed by you)"


def log_line(record: Dict[str, Any]) -> str:
    session = str(record.get("session") or "")
    who = f" [{session[:8]}]" if session else ""
    note = one_line(str(record.get("note") or ""), 120)
    attempt = record.get("attempt")
    extra = f" by {one_line(str(record['by']), 40)}" if record.get("by") else ""
    return (f"#{record.get('seq')} {record.get('ts')} {one_line(str(record.get('step', '')), 60)} "
            f"{record.get('status')}{f' (attempt {attempt})' if attempt else ''}{extra}{who}"
            + (f"  {note}" if note else ""))
