"""Text and JSON views of a job for ``status`` and ``log`` (people and programs, not the model)."""

from __future__ import annotations

from store.base.text import one_line
from store.state.brief import ALL_DONE, progress
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional


def sandbox_data(job: Job, env: Mapping[str, str]) -> Dict[str, Any]:
    """Whether Bash is enforced by baton's sandbox here, and why not when it is not."""
    from store.gate.enforce import current_mode

    mode = current_mode(job.plan, str(job.layout.project), env)
    return {"enforced": mode.kernel, "why": mode.why}


def gates_news(job: Job, env: Mapping[str, str]) -> Optional[str]:
    """The brief's line when no sandbox can run: the gates then only read commands."""
    data = sandbox_data(job, env)
    if data["enforced"]:
        return None
    return (f"GATES: best effort: baton's sandbox cannot run here ({data['why']}); Bash commands are only read, "
            "not confined")


def status_data(job: Job, last: List[Dict[str, Any]]) -> Dict[str, Any]:
    plan, snap, torn = job.plan, job.snap, job.torn
    prog = progress(plan, snap)
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
            "once": {"results": snap.once_results,
                     "open": [{"key": k, **v} for k, v in sorted(snap.once_open.items(), key=lambda kv: kv[1]["seq"])]}}


def status_text(data: Dict[str, Any]) -> str:
    head = f"job {data['job']}: " if data["job"] else ""
    lines = [f"{head}{data['done']}/{data['total']} steps complete, {data['records']} ledger records",
             f"next: {data['next'] if data['next'] is not None else ALL_DONE}"]
    sandbox = data.get("sandbox")
    if sandbox is not None:
        lines.append("gates: Bash runs in baton's sandbox (bubblewrap), enforced by the kernel" if sandbox["enforced"]
                     else f"gates are best effort: baton's sandbox cannot run here ({sandbox['why']})")
    lines.append("steps:")
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
    once = data["once"]
    if once["results"] or once["open"]:
        lines.append(f"side effects (baton once): {once['results']} results, {len(once['open'])} open")
        lines += [f"  open {one_line(o['key'], 60)} ({one_line(str(o.get('step')), 40)}) since {o.get('ts')}: running "
                  "now, or unknown until settled" for o in once["open"]]
    return "\n".join(lines)


def log_line(record: Dict[str, Any]) -> str:
    session = str(record.get("session") or "")
    who = f" [{session[:8]}]" if session else ""
    note = one_line(str(record.get("note") or ""), 120)
    attempt = record.get("attempt")
    extra = f" by {one_line(str(record['by']), 40)}" if record.get("by") else ""
    return (f"#{record.get('seq')} {record.get('ts')} {one_line(str(record.get('step', '')), 60)} "
            f"{record.get('status')}{f' (attempt {attempt})' if attempt else ''}{extra}{who}"
            + (f"  {note}" if note else ""))


def to_json(data: Any) -> str:
    """JSON as baton's commands print it for programs: one line, ASCII, keys in a stable order."""
    import json

    return json.dumps(data, separators=(",", ":"), ensure_ascii=True)


def brief_data(job: Job, session: str) -> Dict[str, Any]:
    """The brief with what a program needs to decide what to do next: is the job complete, does NEXT
    wait for a person's approval, is a job limit reached (then the agent may only read)."""
    from store.monitor import limits, outcomes

    nxt = job.next
    return {"brief": job.brief(session), "next": nxt.id if nxt else None, "complete": nxt is None,
            "waiting": nxt.id if nxt is not None and job.waiting_for_approval() else None,
            "limits": limits.reached(job.plan.limits, job.snap, outcomes.read_counters(job.layout)),
            "last": job.snap.last}
