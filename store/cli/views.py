"""Text and JSON views of a job for ``status`` and ``log`` (people and programs, not the model)."""

from __future__ import annotations

from store.base.text import one_line
from store.state import leases, workers
from store.state.brief import ALL_DONE, progress
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, Iterator, List, TextIO

LOG_CHUNK = 1 << 18  # a few hundred records decoded at a time


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
            "once": {"results": snap.once_results,
                     "open": [{"key": k, **v} for k, v in sorted(snap.once_open.items(), key=lambda kv: kv[1]["seq"])]},
            "partial": job.partial, **_parallel(job)}


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
    once = data["once"]
    if once["results"] or once["open"]:
        lines.append(f"side effects (baton once): {once['results']} results, {len(once['open'])} open")
        lines += [f"  open {one_line(o['key'], 60)} ({one_line(str(o.get('step')), 40)}) since {o.get('ts')}: running "
                  "now, or unknown until settled" for o in once["open"]]
    if data.get("partial"):
        lines.append("note: read from the ledger's end while its snapshot is rebuilt; sessions and problems "
                     "cover the latest records only")
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
    get = record.get
    session, note, attempt, by = str(get("session") or ""), get("note"), get("attempt"), get("by")
    line = f"#{get('seq')} {get('ts')} {one_line(str(get('step', '')), 60)} {get('status')}"
    if attempt:
        line += f" (attempt {attempt})"
    if by:
        line += f" by {one_line(str(by), 40)}"
    if session:
        line += f" [{session[:8]}]"
    note = one_line(str(note), 120) if note else ""
    return f"{line}  {note}" if note else line


def to_json(data: Any) -> str:
    """JSON as baton's commands print it for programs: one line, ASCII, keys in a stable order."""
    import json

    return json.dumps(data, separators=(",", ":"), ensure_ascii=True)


def brief_data(job: Job, session: str) -> Dict[str, Any]:
    """The brief with what a program needs to decide what to do next: is the job complete, does NEXT
    wait for a person's approval, is a job limit reached (then the agent may only read)."""
    from store.monitor import limits, outcomes

    nxt = job.next
    return {"brief": job.brief(session), "next": nxt.id if nxt else None, "complete": job.complete(),
            "waiting": nxt.id if nxt is not None and job.waiting_for_approval() else None,
            "limits": limits.reached(job.plan.limits, job.snap, outcomes.read_counters(job.layout)),
            "last": job.snap.last}


def write_log(ledger: Path, start: int, end: int, as_json: bool, out: TextIO) -> None:
    """The records between two offsets, oldest first, a chunk at a time (memory stays flat). A line
    that is not a record is left out (``baton verify`` names it). Chunks of lines exactly as baton
    sealed them are decoded at once, or, for ``--json``, written as they are (they are that JSON)."""
    import json

    from store.state.ledger import LedgerError, parse_line
    from store.state.sealing import all_sealed

    for lines in _line_chunks(ledger, start, end):
        if all_sealed(lines):
            if as_json:
                out.write(b"\n".join(lines).decode("ascii") + "\n")
                continue
            records = json.loads(b"[" + b",".join(lines) + b"]")
        else:
            records = []
            for raw in lines:
                try:
                    records.append(parse_line(raw))
                except LedgerError:
                    continue
        if as_json:
            out.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
        else:
            out.write("".join([log_line(r) + "\n" for r in records]))


def _line_chunks(ledger: Path, start: int, end: int) -> Iterator[List[bytes]]:
    if end <= start:
        return
    with open(ledger, "rb") as handle:
        handle.seek(start)
        left, carry = end - start, b""
        while left > 0:
            data = handle.read(min(LOG_CHUNK, left))
            if not data:
                return
            left -= len(data)
            lines = (carry + data).split(b"\n")
            carry = lines.pop()
            if lines:
                yield lines
