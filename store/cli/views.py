"""Text and JSON views of a job for ``status`` and ``log`` (people and programs, not the model)."""

from __future__ import annotations

from store.base.text import one_line
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional


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
    """The status document (schema ``baton.status`` version 1, see the README)."""
    import os

    from store.monitor import exporting, summary, telemetry

    data = summary.summarize(job, figures_of(job), last)
    state = exporting.load_state(job.layout)
    data["telemetry"] = {"enabled": telemetry.enabled(os.environ if env is None else env),
                         "last_export": state["ok"], "last_try": state["tried"], "error": state["error"],
                         "sent": {"points": state["metrics"], "records": state["logs"]}}
    return data


def status_text(data: Dict[str, Any], colour: bool = False, every: bool = False) -> str:
    from store.cli import dashboard

    return dashboard.render(data, colour, every, log_line=log_line)


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
