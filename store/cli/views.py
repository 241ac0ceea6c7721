"""Text and JSON views of a job for ``status`` and ``log`` (people and programs, not the model)."""

from __future__ import annotations

import os

from store.base.text import one_line
from store.state import leases, workers
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, Iterator, List, Mapping, Optional, TextIO

LOG_CHUNK = 1 << 18  # a few hundred records decoded at a time


def sandbox_data(job: Job, env: Mapping[str, str]) -> Dict[str, Any]:
    """Whether Bash is enforced by baton's sandbox here, and why not when it is not; what /tmp is in it
    (``host``: the host's, the job's changes kept apart; ``private``: the job's own, and ``tmp_why``)."""
    from store.sandbox.mode import current_mode

    mode = current_mode(job.plan, job.layout.project_dir, env)
    tmp = {} if not mode.kernel else {"tmp": "host"} if mode.overlay else {"tmp": "private", "tmp_why": mode.tmp}
    return {"enforced": mode.kernel, "why": mode.why, **tmp}


def gates_news(job: Job, env: Mapping[str, str]) -> Optional[str]:
    """The brief's line when no sandbox can run: the gates then only read commands, and a command that
    can read the approval key (the model's user can, unless the key exists and is not readable here)
    can sign an approval, so approvals are best effort too."""
    data = sandbox_data(job, env)
    if data["enforced"]:
        return None
    line = (f"GATES: best effort: baton's sandbox cannot run here ({data['why']}); Bash commands are only read, "
            "not confined")
    return line + (KEY_READABLE if _key_readable(env) else "")


KEY_READABLE = ", and approvals are best effort too: a command can read the approval key and sign one"


def _key_readable(env: Mapping[str, str]) -> bool:
    from store.state.approvals import key_path

    path = key_path(env)
    return not os.path.exists(path) or os.access(path, os.R_OK)  # absent: made readable by the first approval


def figures_of(job: Job) -> Dict[str, Any]:
    """The job's figures caught up with everything on disk, and the alerts that now hold raised
    (saved back when the store is writable)."""
    from store.monitor import figures, watch

    if not job.layout.root.is_dir():
        return figures.catch_up(figures.new(), job.layout, job.plan)
    try:
        return watch.settle(job, person_sees=True)[0]
    except OSError:  # a full disk or a read-only store: the figures are still worth showing
        return figures.catch_up(figures.load(job.layout), job.layout, job.plan)


def status_data(job: Job, last: List[Dict[str, Any]], env: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The status document (schema ``baton.status`` version 1, see docs/monitoring.md)."""
    import os

    from store.monitor import exporting, summary, telemetry

    data = summary.summarize(job, figures_of(job), last)
    data.update(_parallel(job))
    data["database"] = _database(job)
    data["sandbox"] = sandbox_data(job, os.environ if env is None else env)
    state = exporting.load_state(job.layout)
    data["telemetry"] = {"enabled": telemetry.enabled(os.environ if env is None else env),
                         "last_export": state["ok"], "last_try": state["tried"], "error": state["error"],
                         "sent": {"points": state["metrics"], "records": state["logs"]},
                         "to": state["to"], "settings_from": state["from"]}
    return data


def _database(job: Job) -> Optional[Dict[str, Any]]:
    """A job kept in a database that cannot be reached now: since when, the time of the clone's copy
    shown (``as_of``), the records queued and the error; ``None`` otherwise."""
    if not job.problem:
        return None
    from store.backend.local import when

    return {"reachable": False, "since": when(job.down_since), "as_of": when(job.as_of), "queued": job.queued,
            "error": job.problem}


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


def status_text(data: Dict[str, Any], colour: bool = False, every: bool = False) -> str:
    from store.cli import dashboard

    text = "\n".join([*database_lines(data), dashboard.render(data, colour, every, log_line=log_line)])
    return "\n".join([text, *_workers_text(data)]) if data.get("parallel") else text


def database_lines(data: Mapping[str, Any]) -> List[str]:
    """The line that goes first while the job's database cannot be reached, so that nobody takes the
    clone's copy for the database's state."""
    db = data.get("database")
    if not db:
        return []
    return [f"database: cannot be reached since {db['since']}; shown as of {db['as_of']} (the clone's copy), "
            f"{db['queued']} record(s) queued: {one_line(db['error'], 120)}"]


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

    from store.ledger.ledger import LedgerError, parse_line
    from store.ledger.sealing import all_sealed

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
