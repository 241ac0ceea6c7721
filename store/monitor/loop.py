"""The Stop decision: send the agent back while NEXT exists, within a budget of its own.

Claude Code's own cap on Stop blocks resets whenever a tool runs, so it does not bound a loop.
baton keeps, per session, how many times it sent the agent back and the ledger ``seq`` at the last
time. It lets the stop happen when all steps are complete, when NEXT waits for a person's
approval, when a job limit is reached, when nothing was recorded since the last block, or when
the session's budget (``limits.stop_blocks``, default :data:`DEFAULT_BUDGET`) is spent. While
background work of the session (a subagent) still runs, the stop passes quietly: the session is
not ending, since the host wakes it again when that work finishes, so nothing is spent or logged.
In a parallel plan NEXT is the worker's own step: a worker whose step is done claims a ready one
and is sent back to it; with nothing ready for it, it may stop; one that gives up with a step in
hand gives it back, so another worker can take it at once.
"""

from __future__ import annotations

import os

from store.base import durable
from store.base.errors import BatonError
from store.base.values import Value
from store.monitor import alerts, limits, watch
from store.monitor.counters import read_counters, save_counters
from store.state import journal, leases, workers
from store.state.job import Job
from store.state.location import HOOKS_LOCK
from store.state.protocol import stop_reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

DEFAULT_BUDGET = 12
KEEP_SESSIONS = 50


def progress_mark(job: Job) -> Any:
    """What changes when this session makes progress: the job's last step record, or in a parallel
    plan the worker's own step and its last record (other workers' progress is not this one's)."""
    if not job.plan.parallel:
        return job.snap.progress_seq
    step = job.next.id if job.next is not None else ""
    return f"{step}@{job.snap.steps.get(step, {}).get('seq', 0)}"


GIVING_UP = ("nothing recorded since", "this session's budget")


def _verdict(job: Job, counters: Dict[str, Any], session: str, background: int) -> Tuple[Optional[str], str]:
    """(block reason or None, why the stop is allowed; empty: nothing worth a ledger record)."""
    nxt = job.next
    if nxt is None or background:
        return None, ""
    if job.waiting_for_approval():
        return None, f"waiting for a person's approval of {nxt.id}"
    hit = limits.reached(job.plan.limits, job.snap, counters)
    if hit:
        return None, "limit reached: " + ", ".join(hit)
    budget = int(job.plan.limits.get("stop_blocks", DEFAULT_BUDGET))
    stops = counters.setdefault("stops", {})
    mine = stops.setdefault(session or "-", {"blocks": 0, "seq": -1})
    if mine["blocks"] and mine["seq"] == progress_mark(job):
        return None, "nothing recorded since baton last sent the session back"
    if mine["blocks"] >= budget:
        return None, f"this session's budget of {budget} continuations is spent"
    mine["blocks"] += 1
    mine["seq"] = progress_mark(job)
    if len(stops) > KEEP_SESSIONS:
        stops.pop(next(iter(stops)))
    line = f"NEXT: {nxt.id}" + (f" - {nxt.title}" if nxt.title else "")
    return stop_reason(line, nxt.id, mine["blocks"], budget), ""


class Answer(Value):
    __slots__ = ("reason", "person")

    def __init__(self, reason: Optional[str], person: Optional[str]) -> None:
        self.reason = reason  # why the stop is blocked (what the model reads), or None to let it happen
        self.person = person  # alerts for the person (a systemMessage), or None


def _figures(job: Job, counters: Dict[str, Any], session: str, transcript: str) -> Optional[Dict[str, Any]]:
    """The figures caught up with this session; ``None`` (and a DEGRADED line) when that fails, so
    that a broken figures file never keeps a session alive or lets it go early."""
    try:
        return watch.catch_up(job, counters, session, transcript)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        from store.state import health

        health.report_failure(job.layout, "Stop", f"figures: {type(exc).__name__}: {exc}"[:300])
        return None


def stop(job: Job, session: str, transcript: str, background: int = 0) -> Answer:
    """Whether to block this stop, and what to tell the person. ``background``: how many background
    tasks of the session are still running."""
    layout = job.layout
    os.makedirs(layout.state_dir, exist_ok=True)
    if not background:
        try:
            if job.take_step():  # a worker whose step is done takes the next ready one
                job = Job(layout, job.env)
        except BatonError:
            pass  # nothing could be claimed (the database is down): the session may stop
    leases.renew(layout, job.snap, job.worker)
    with durable.locked(layout.file(HOOKS_LOCK)):
        counters = read_counters(layout)
        counters["turns"] = int(counters.get("turns", 0)) + 1
        fig = _figures(job, counters, session, watch.transcript_of(transcript))
        reason, why = _verdict(job, counters, session, background)
        new = watch.raise_fresh(job, counters, watch.conditions(job, counters, fig), session)
        if reason is not None and new:
            reason += "\n" + "\n".join(a.model for a in new)
        else:
            alerts.defer(counters, new)
        person = alerts.for_person(new, alerts.take_pending_person(counters))
        mine = counters.setdefault("stops", {}).setdefault(session or "-", {"blocks": 0, "seq": -1})
        log = reason is None and bool(why) and mine.get("logged") != progress_mark(job)
        if log:
            mine["logged"] = progress_mark(job)  # one stop record per session and state of progress
        save_counters(layout, counters)
    if log and job.next is not None:
        journal.append(layout, job.next.id, "stop", f"session ended with {job.next.id} still NEXT: {why}")
        if job.plan.parallel and why.startswith(GIVING_UP):
            workers.release(layout, job.snap, job.worker, f"session stopped: {why}")
    return Answer(reason, person)


def decide(job: Job, session: str, transcript: str, background: int = 0) -> Optional[str]:
    """The reason to block this stop, or ``None`` to let it happen (see :func:`stop`)."""
    return stop(job, session, transcript, background).reason
