"""Sending a job's figures to an OpenTelemetry collector: what is new, posted with a short timeout.

Runs in a detached process (see :mod:`store.monitor.launch`) or for ``baton export``, never in a
hook. ``.baton/monitor/telemetry.json`` moves on only for what the collector accepted: metrics
are cumulative and events wait in the ledger and the figures, so whatever a collector that is down
or slow did not take is sent by a later export.
"""

from __future__ import annotations

import os
import time

from store.base import durable, jsonc
from store.monitor import figures, telemetry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

    from store.monitor.export_settings import Settings
    from store.state.location import Layout

MAX_POINTS = 2000  # data points per request
MAX_RECORDS = 1000  # log records per request


def state_path(layout: Layout) -> str:
    return os.path.join(figures.folder(layout), "telemetry.json")


def lock_path(layout: Layout) -> str:
    return os.path.join(figures.folder(layout), "export.lock")


def load_state(layout: Layout) -> Dict[str, Any]:
    try:
        with open(state_path(layout), "rb") as handle:
            data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        data = None
    base: Dict[str, Any] = {"rev": 0, "ledger": 0, "alerts": 0, "runs": {}, "ok": None, "error": None,
                            "tried": None, "metrics": 0, "logs": 0, "to": None, "from": None}
    return {**base, **data} if isinstance(data, dict) else base


def post(url: str, body: Mapping[str, Any], headers: Mapping[str, str], timeout: float) -> Tuple[bool, bool, str]:
    """POST one OTLP/JSON request: (accepted, worth retrying, what happened)."""
    import urllib.error
    import urllib.request

    data = jsonc.dumps(body, separators=(",", ":")).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            reply = answer.read(4096).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        retry = exc.code in (408, 429, 502, 503, 504)
        return False, retry, f"{url}: HTTP {exc.code} {exc.reason}"
    except (OSError, ValueError) as exc:
        return False, True, f"{url}: {type(exc).__name__}: {exc}"
    return True, False, _partial(reply)


def _partial(reply: str) -> str:
    try:
        partial = jsonc.loads(reply).get("partialSuccess") or {}
    except (ValueError, AttributeError):
        return ""
    message = partial.get("errorMessage") if isinstance(partial, dict) else None
    return f"partly rejected: {message}" if message else ""


def _chunks(items: Sequence[Dict[str, Any]], size: int, count: Any) -> List[List[Dict[str, Any]]]:
    out: List[List[Dict[str, Any]]] = [[]]
    used = 0
    for item in items:
        n = count(item)
        if out[-1] and used + n > size:
            out.append([])
            used = 0
        out[-1].append(item)
        used += n
    return [c for c in out if c]


def _points(metric: Mapping[str, Any]) -> int:
    data = metric.get("sum") or metric.get("gauge") or {}
    return len(data.get("dataPoints", ()))


class Batch:
    """What one export would send, and where the export state moves once it is accepted."""

    def __init__(self, metrics: List[Dict[str, Any]], logs: List[Dict[str, Any]], moves: Dict[str, Any],
                 rev: int) -> None:
        self.metrics, self.logs, self.moves, self.rev = metrics, logs, moves, rev

    def bodies(self, config: telemetry.Config) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
        metric_bodies = [telemetry.metrics_body(c, config.resource) for c in _chunks(self.metrics, MAX_POINTS, _points)]
        log_bodies = [telemetry.logs_body(c, config.resource) for c in _chunks(self.logs, MAX_RECORDS, lambda _: 1)]
        return metric_bodies, log_bodies


def gather(layout: Layout, env: Mapping[str, str], state: Mapping[str, Any], now: float) -> Batch:
    """Catch the figures up and collect what the collector has not accepted yet."""
    from store.monitor import signals, summary
    from store.state.job import Job

    job = Job(layout, env)
    fig = figures.refresh(layout, job.plan)
    data = summary.summarize(job, fig, now=now)
    job_id = str(data["job_id"])
    logs, ledger_end = signals.ledger_events(layout.ledger, int(state["ledger"]), job.plan, job_id, now)
    logs += signals.alert_events(fig, int(state["alerts"]), job_id, now)
    started, runs = signals.session_events(data["sessions"], state["runs"], job_id, now)
    logs += started
    logs.sort(key=lambda r: int(r["timeUnixNano"]))
    metrics = signals.metrics(fig, data, job.plan, int(state["rev"]), now)
    moves = {"ledger": ledger_end, "alerts": int(fig["alerts_total"]), "runs": runs}
    return Batch(metrics, logs, moves, int(fig["rev"]))


class Outcome:
    def __init__(self, sent_points: int, sent_logs: int, error: str) -> None:
        self.sent_points, self.sent_logs, self.error = sent_points, sent_logs, error


def settings_for(layout: Layout, env: Mapping[str, str]) -> Settings:
    """The ``OTEL_*`` settings to send with (:class:`BatonError` when baton's own file is broken)."""
    from store.monitor import export_settings

    return export_settings.find(env, str(layout.project))


def export(layout: Layout, env: Mapping[str, str], now: Optional[float] = None,
           settings: Optional[Settings] = None) -> Outcome:
    """Send what is new, once; move the export state on for what was accepted."""
    now = time.time() if now is None else now
    settings = settings_for(layout, env) if settings is None else settings
    config = telemetry.Config(settings.values)
    state = load_state(layout)
    state.update(to=[config.metrics_url, config.logs_url], **{"from": settings.source})
    batch = gather(layout, env, state, now)
    metric_bodies, log_bodies = batch.bodies(config)
    errors: List[str] = []
    warnings: List[str] = []
    points = records = 0
    metrics_done = logs_done = True
    for body in metric_bodies:
        ok, retry, detail = post(config.metrics_url, body, config.metrics_headers, config.timeout)
        metrics_done = metrics_done and (ok or not retry)
        points += sum(_points(m) for m in body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]) if ok else 0
        (warnings if ok else errors).extend([detail] if detail else [])
    for body in log_bodies:
        ok, retry, detail = post(config.logs_url, body, config.logs_headers, config.timeout)
        logs_done = logs_done and (ok or not retry)
        records += len(body["resourceLogs"][0]["scopeLogs"][0]["logRecords"]) if ok else 0
        (warnings if ok else errors).extend([detail] if detail else [])
        if not logs_done:
            break  # keep the order: later events wait behind the first one refused
    _save(layout, state, batch, metrics_done, logs_done, points, records, errors + warnings, now)
    return Outcome(points, records, "; ".join(errors))


def _save(layout: Layout, state: Dict[str, Any], batch: Batch, metrics_done: bool, logs_done: bool,
          points: int, records: int, errors: List[str], now: float) -> None:
    from store.monitor.clock import iso

    if metrics_done:
        state["rev"] = batch.rev
    if logs_done:
        state.update(batch.moves)
    state.update(tried=iso(now), metrics=int(state["metrics"]) + points, logs=int(state["logs"]) + records)
    if metrics_done and logs_done:
        state["ok"] = iso(now)
    state["error"] = "; ".join(errors)[:500] or None
    durable.atomic_write(state_path(layout), jsonc.dumps(state, separators=(",", ":")).encode("ascii"), sync=False)


def _sizes(layout: Layout) -> Tuple[int, ...]:
    out = []
    for path in (layout.ledger, layout.events):
        try:
            out.append(path.stat().st_size)
        except OSError:
            out.append(-1)
    return tuple(out)


def run(layout: Layout, env: Mapping[str, str], rounds: int = 3,
        settings: Optional[Settings] = None) -> Optional[Outcome]:
    """Export under the lock (one sender at a time), again while new records keep arriving."""
    os.makedirs(figures.folder(layout), exist_ok=True)
    settings = settings_for(layout, env) if settings is None else settings
    outcome = None
    for _ in range(rounds):
        seen = _sizes(layout)
        with durable.locked(lock_path(layout)):
            outcome = export(layout, env, settings=settings)
        if outcome.error or _sizes(layout) == seen:
            break
    return outcome


def note_error(layout: Layout, text: str) -> None:
    """Keep why an export failed where ``baton status`` shows it; never raises."""
    try:
        state = load_state(layout)
        state["error"] = text[:500]
        durable.atomic_write(state_path(layout), jsonc.dumps(state, separators=(",", ":")).encode("ascii"),
                             sync=False)
    except (OSError, ValueError):
        pass
