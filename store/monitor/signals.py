"""What a job exports to OpenTelemetry: metrics under ``baton.job.*`` and events as log records.

Every point carries ``baton.job.id``; per-step points add ``baton.step.id`` and ``baton.step.phase``,
per-session points ``session.id`` (the attribute Claude Code's own telemetry uses, so a backend can
join the two). Sums are cumulative since the job's first activity, so sending one again is
harmless. Job-level points go in every export; a step's or a session's points only when they
changed since the last successful export. Events: a step recorded, an approval, an alert, a limit
reached, a session started or ended.
"""

from __future__ import annotations

from store.ledger.ledger import iter_objects
from store.monitor import costs
from store.monitor.clock import epoch
from store.monitor.fold import weight
from store.monitor.telemetry import Point, log_record, metric

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from store.plan.plan import Plan

TOKEN_TYPES = ("input", "output", "cacheRead", "cacheCreation")  # the names Claude Code's telemetry uses
STEP_EVENTS = ("running", "done", "failed", "skipped")


def _step_attrs(job_id: str, phases: Mapping[str, Optional[str]], step_id: str) -> Dict[str, Any]:
    return {"baton.job.id": job_id, "baton.step.id": step_id, "baton.step.phase": phases.get(step_id)}


def _phases(plan: Plan) -> Dict[str, Optional[str]]:
    return {step.id: step.phase for step in plan.steps}


def _job_points(data: Mapping[str, Any], job_id: str, start: float, now: float) -> List[Dict[str, Any]]:
    job = {"baton.job.id": job_id}
    out = [metric("baton.job.steps.done", "{step}", "steps recorded done or skipped", [Point(job, data["done"])],
                  start, now, "gauge"),
           metric("baton.job.steps.total", "{step}", "steps in the plan", [Point(job, data["total"])], start, now,
                  "gauge"),
           metric("baton.job.sessions", "{session}", "sessions that worked on the job",
                  [Point(job, data["sessions_total"])], start, now),
           metric("baton.job.alerts", "{alert}", "alerts raised", [Point(job, data["alerts_total"])], start, now),
           metric("baton.job.active_time", "s", "time sessions spent working",
                  [Point(job, float(data["duration"]["active_s"]))], start, now)]
    if data["duration"]["wall_s"] is not None:
        out.append(metric("baton.job.duration", "s", "wall time since the first record",
                          [Point(job, float(data["duration"]["wall_s"]))], start, now, "gauge"))
    if data["cost"]["projected_usd"] is not None:
        out.append(metric("baton.job.cost.projected", "USD", "cost projected at completion",
                          [Point(job, float(data["cost"]["projected_usd"]))], start, now, "gauge"))
    return out


def _changed(entry: Mapping[str, Any], since: int) -> bool:
    return int(entry.get("rev") or 0) > since


def _step_points(fig: Mapping[str, Any], plan: Plan, job_id: str, since: int,
                 start: float, now: float) -> List[Dict[str, Any]]:
    session_costs = costs.session_costs(fig["sessions"])
    phases = _phases(plan)
    tokens: List[Point] = []
    calls: List[Point] = []
    failures: List[Point] = []
    dollars: List[Point] = []
    waits: List[Point] = []
    files: List[Point] = []
    retries: List[Point] = []
    for step_id, entry in fig["steps"].items():
        by = entry.get("by") or {}
        fresh = _changed(entry, since) or any(_changed(fig["sessions"].get(s) or {}, since) for s in by)
        if not fresh:
            continue
        attrs = _step_attrs(job_id, phases, step_id)
        waits.append(Point(attrs, float(entry.get("wait") or 0.0)))
        files.append(Point(attrs, int(entry.get("changed") or 0)))
        retries.append(Point(attrs, max(int(entry.get("attempt") or 0) - 1, 0)))
        for sid, counts in by.items():
            mine = {**attrs, "session.id": None if sid in ("", "*") else sid}  # "*": earlier sessions, merged
            tokens += [Point({**mine, "type": kind}, int(n)) for kind, n in zip(TOKEN_TYPES, counts[:4])]
            calls.append(Point(mine, int(counts[4])))
            failures.append(Point(mine, int(counts[5])))
            cost = session_costs.get(sid)
            if cost is not None and cost.reported is not None and cost.w:
                share = cost.reported * (1.0 - cost.uncovered) * weight(counts[:4]) / cost.w
                dollars.append(Point(mine, round(share, 9)))
    out = []
    for name, unit, what, points in (
            ("baton.job.tokens", "{token}", "tokens used, by type", tokens),
            ("baton.job.cost", "USD", "reported cost, shared among steps by weighted tokens", dollars),
            ("baton.job.tool_calls", "{call}", "tool calls", calls),
            ("baton.job.tool_failures", "{call}", "tool calls that failed", failures),
            ("baton.job.approval_wait", "s", "time a step waited for a person's approval", waits),
            ("baton.job.changed_files", "{file}", "distinct files a step changed", files),
            ("baton.job.retries", "{attempt}", "attempts beyond the first", retries)):
        if points:
            out.append(metric(name, unit, what, points, start, now))
    return out


def _session_points(fig: Mapping[str, Any], job_id: str, since: int, start: float,
                    now: float) -> List[Dict[str, Any]]:
    points = [Point({"baton.job.id": job_id, "session.id": None if sid == "*" else sid}, int(entry.get("turns") or 0))
              for sid, entry in fig["sessions"].items() if _changed(entry, since)]
    return [metric("baton.job.turns", "{turn}", "model turns", points, start, now)] if points else []


def metrics(fig: Mapping[str, Any], data: Mapping[str, Any], plan: Plan, since: int,
            now: float) -> List[Dict[str, Any]]:
    """Every metric to send: the job's, and the steps' and sessions' changed after revision ``since``."""
    job_id = str(data["job_id"])
    start = float(fig["first"]) if fig["first"] is not None else now
    return (_job_points(data, job_id, start, now) + _step_points(fig, plan, job_id, since, start, now)
            + _session_points(fig, job_id, since, start, now))


def _record_event(record: Mapping[str, Any], plan: Plan, job_id: str, now: float) -> Optional[Dict[str, Any]]:
    status, step_id = str(record.get("status")), str(record.get("step", ""))
    when = epoch(record.get("ts")) or now
    attrs = {**_step_attrs(job_id, _phases(plan), step_id), "session.id": record.get("session") or None}
    if status in STEP_EVENTS:
        note = str(record.get("note") or "")
        return log_record("baton.step.recorded", f"{step_id} {status} (attempt {record.get('attempt')})"
                          + (f": {note}" if note else ""), when, now,
                          {**attrs, "baton.step.status": status, "baton.step.attempt": record.get("attempt")},
                          "WARN" if status == "failed" else "INFO")
    if status == "approved":
        return log_record("baton.approval", f"{step_id} approved by {record.get('by') or 'a person'}", when, now, attrs)
    return None


def ledger_events(path: Any, offset: int, plan: Plan, job_id: str, now: float) -> Tuple[List[Dict[str, Any]], int]:
    """Log records for the ledger's complete records after ``offset``, and the offset after them."""
    out = []
    for after, record in iter_objects(path, offset):
        offset = after
        event = _record_event(record, plan, job_id, now) if record is not None else None
        if event is not None:
            out.append(event)
    return out, offset


def alert_events(fig: Mapping[str, Any], sent: int, job_id: str, now: float) -> List[Dict[str, Any]]:
    """The alerts raised after the first ``sent`` (as many as the figures still keep)."""
    new = int(fig["alerts_total"]) - sent
    out = []
    for alert in fig["alerts"][-new:] if new > 0 else []:
        kind = str(alert.get("alert") or "")
        name = "baton.limit.reached" if kind == "limit" else "baton.alert"
        attrs = {"baton.job.id": job_id, "baton.step.id": alert.get("step") or None,
                 "session.id": alert.get("session") or None, "baton.alert.kind": kind}
        out.append(log_record(name, str(alert.get("message") or kind), epoch(alert.get("ts")) or now, now, attrs,
                              "WARN"))
    return out


def session_events(views: List[Mapping[str, Any]], sent: Mapping[str, List[int]], job_id: str,
                   now: float) -> Tuple[List[Dict[str, Any]], Dict[str, List[int]]]:
    """Starts and ends of session runs not sent yet; and the counts sent once these are."""
    out, counts = [], {}
    for view in views:
        sid, runs = view["id"], view["runs"]
        started, ended = (list(sent.get(sid) or [0, 0]) + [0, 0])[:2]
        attrs = {"baton.job.id": job_id, "session.id": sid}
        for run in runs[started:]:
            out.append(log_record("baton.session.started", f"session {sid[:8]} started", epoch(run["start"]) or now,
                                  now, {**attrs, "baton.session.source": view.get("source") or None}))
        finished = [r for r in runs if r["ended"] != "open"]
        for run in finished[ended:]:
            out.append(log_record("baton.session.ended", f"session {sid[:8]} ended: {run['ended']}",
                                  epoch(run["end"]) or now, now, {**attrs, "baton.session.ended": run["ended"]},
                                  "WARN" if run["ended"] in ("lost", "killed", "api_error") else "INFO"))
        counts[sid] = [len(runs), len(finished)]
    return out, counts
