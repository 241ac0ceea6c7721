"""Tool outcomes from PostToolUse: a bounded events file, counters, and alerts at thresholds.

``events.jsonl`` keeps one compact line per outcome and rotates at :data:`EVENTS_CAP` bytes (one
old file kept). ``counters.json`` keeps what the alerts and limits need: calls and failures since
the last ledger record, identical failures in a row, files changed by the current step, and the
job's total tool calls, the job's operations that left the machine (``external_ops``, see
:func:`take_external`), and the turns an API error ended (:func:`turn_failed`). Counters reset
when the ledger gains a record or NEXT moves on (the job's totals do not).
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.base.values import Value
from store.monitor.counters import read_counters as read_counters  # where every caller has found them
from store.monitor.counters import save_counters as save_counters
from store.state.location import EVENTS, HOOKS_LOCK, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from store.state.snapshot import Snapshot

EVENTS_CAP = 1024 * 1024
KEEP_FILES = 200
DEFAULTS = {"calls_without_record": 25, "repeated_failures": 3}


def shown_path(path: str, project: str) -> str:
    """How a changed file is recorded: resolved and project-relative, or absolute when outside."""
    from store.base.paths import relative

    rel = relative(os.path.realpath(path), os.path.realpath(project))
    return rel if rel is not None else path


def take_external(layout: Layout, count: int, cap: Optional[float]) -> Optional[int]:
    """Add ``count`` operations that leave the machine to the job's total (``external_ops`` in
    counters.json, the one count every caller shares: the gate for Bash, WebFetch and MCP calls,
    ``baton once`` for its results); None, adding nothing, when that would pass ``cap``."""
    from store.base import durable

    os.makedirs(layout.state_dir, exist_ok=True)
    with durable.locked(layout.file(HOOKS_LOCK)):
        counters = read_counters(layout)
        total = int(counters.get("external_ops", 0)) + count
        if cap and total > cap:
            return None
        counters["external_ops"] = total
        save_counters(layout, counters)
    return total


def append_event(layout: Layout, event: Mapping[str, Any]) -> None:
    """Append one line to ``events.jsonl``, rotating it first when it is full (one old file kept)."""
    from store.base import durable

    path = layout.file(EVENTS)
    try:
        if os.stat(path).st_size > EVENTS_CAP:
            _fold_before_rotating(layout)
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass
    line = jsonc.dumps(event, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"
    durable.append_line(path, line, sync=False)


def turn_failed(layout: Layout, session: str, step: str, error: str, detail: str, seq: int, via: str,
                since: str = "") -> bool:
    """Count one turn an API error ended (see :mod:`store.monitor.api_errors`; ``seq``: the snapshot's
    ``progress_seq`` then); False, writing nothing, when ``since`` is given and the last error counted
    is already this session's, at or after ``since`` (its StopFailure hook got there first)."""
    from store.base import durable
    from store.monitor import api_errors
    from store.state.journal import now_iso

    os.makedirs(layout.state_dir, exist_ok=True)
    with durable.locked(layout.file(HOOKS_LOCK)):
        counters = read_counters(layout)
        if api_errors.already_counted(counters, session, since):
            return False
        entry = api_errors.entry(now_iso(), session, step, error, detail, seq, via)
        append_event(layout, {"kind": api_errors.KIND, **entry})
        counters["api_errors"] = int(counters.get("api_errors", 0) or 0) + 1
        counters["api_error"] = entry
        save_counters(layout, counters)
    return True


def _fresh_for(counters: Dict[str, Any], seq: int, step: str) -> Dict[str, Any]:
    if counters.get("seq") != seq:
        counters.update(seq=seq, calls_since_record=0, failures_since_record=0)
    if counters.get("step") != step:
        counters.update(step=step, changed=[], changed_count=0)
    return counters


def for_worker(counters: Dict[str, Any], worker: str) -> Dict[str, Any]:
    """The counters of one step's work: the whole file, or in a parallel plan (``worker`` given)
    the worker's own part, so workers sharing a ``.baton/`` do not reset each other's."""
    if not worker:
        return counters
    mine: Dict[str, Any] = counters.setdefault("workers", {}).setdefault(worker, {})
    if len(counters["workers"]) > KEEP_FILES:
        counters["workers"].pop(next(iter(counters["workers"])))
    return mine


class Observed(Value):
    __slots__ = ("model", "person", "earlier")

    def __init__(self, model: List[str], person: List[Any], earlier: List[str]) -> None:
        self.model = model  # texts for the model: reminders at every threshold, and alerts waiting for it
        self.person = person  # the alerts (store.monitor.alerts.Alert) raised by this outcome, once each
        self.earlier = earlier  # the person's texts of alerts raised where no person could see them


def update(layout: Layout, event: Mapping[str, Any], seq: int, step: str, limits: Mapping[str, float],
           worker: str = "") -> List[str]:
    """Fold one outcome in; return the alerts (for the model) that this outcome crosses."""
    return observe(layout, event, seq, step, limits, worker=worker).model


def observe(layout: Layout, event: Mapping[str, Any], seq: int, step: str, limits: Mapping[str, float],
            snap: Optional[Snapshot] = None, worker: str = "") -> Observed:
    """Fold one outcome in: the events line, the counters, the reminders for the model and the
    alerts for the person (raised once per condition; see :mod:`store.monitor.alerts`). ``worker``:
    in a parallel plan, whose step this is (``seq`` is then that step's last record); its counters
    are its own part of the file, the job's limits are judged on the whole."""
    from store.base import durable
    from store.monitor import alerts

    os.makedirs(layout.state_dir, exist_ok=True)
    with durable.locked(layout.file(HOOKS_LOCK)):
        append_event(layout, event)
        whole = read_counters(layout)
        whole["total_calls"] = int(whole.get("total_calls", 0)) + 1
        c = _fresh_for(for_worker(whole, worker), seq, step)
        c["calls_since_record"] = int(c.get("calls_since_record", 0)) + 1
        model, holding = _thresholds(c, event, step, limits, seq)
        if snap is not None:
            holding += _job_conditions(c, whole, limits, snap, step)
        now = str(event.get("ts") or "")
        new = alerts.fresh(c, holding, now)
        for line in alerts.lines(new, str(event.get("session") or ""), now):
            append_event(layout, line)
        # alerts other hooks deferred are the job's, kept in the whole file (``c`` is it unless parallel)
        model = alerts.take_pending(whole) + model + [a.model for a in new if a.kind in ("no-progress", "limit")]
        earlier = alerts.take_pending_person(whole)
        save_counters(layout, whole)
    return Observed(model, new, earlier)


def _thresholds(c: Dict[str, Any], event: Mapping[str, Any], step: str, limits: Mapping[str, float],
                seq: int) -> Tuple[List[str], List[Any]]:
    """The reminders for the model at every threshold, and the conditions that hold for the person."""
    from store.monitor.alerts import Alert, clear

    model: List[str] = []
    holding: List[Any] = []
    if event.get("ok"):
        c.update(consecutive_failures=0, last_failure="")
        clear(c, "failures")
    else:
        c["failures_since_record"] = int(c.get("failures_since_record", 0)) + 1
        sig = f"{event.get('tool')}|{event.get('target')}|{event.get('error')}"
        same = c.get("last_failure") == sig
        if not same:
            clear(c, "failures")
        c.update(consecutive_failures=int(c.get("consecutive_failures", 0)) + 1 if same else 1, last_failure=sig)
        every = int(limits.get("repeated_failures", DEFAULTS["repeated_failures"]))
        text = (f"the same {event.get('tool')} call failed {c['consecutive_failures']} times in a row "
                f"({event.get('target')}: {event.get('error')})")
        if c["consecutive_failures"] % every == 0:
            model.append(f"baton: {text}. Do not retry it unchanged: read the error, change approach, or record "
                         "the step failed.")
        if c["consecutive_failures"] >= every:
            holding.append(Alert("failures", "failures", step, model[-1] if model else text, f"{step}: {text}"))
    for target in event.get("changed", ()):
        if target not in c["changed"]:
            c["changed_count"] = int(c.get("changed_count", 0)) + 1
            if len(c["changed"]) < KEEP_FILES:
                c["changed"].append(target)
    every = int(limits.get("calls_without_record", DEFAULTS["calls_without_record"]))
    if step and c["calls_since_record"] % every == 0:
        model.append(f"baton: {c['calls_since_record']} tool calls since the last recorded step. If {step} is "
                     f"done, record it now: baton record {step} done \"<what you produced>\"")
    if step and c["calls_since_record"] >= every:
        holding.append(Alert("calls", f"calls:{seq}", step, model[-1] if model else "",
                             f"{c['calls_since_record']} tool calls since the last recorded step; NEXT is {step}"))
    cap = limits.get("changed_files")
    if cap and step and c["changed_count"] > cap:
        text = (f"step {step} has changed {c['changed_count']} files, over the job's limit of {int(cap)}; "
                "further writes are refused until the step is recorded.")
        if event.get("changed"):
            model.append(f"baton: {text}")
        holding.append(Alert("changed-files", f"changed:{step}", step, f"baton: {text}", text))
    return model, holding


def _job_conditions(c: Dict[str, Any], whole: Dict[str, Any], limits: Mapping[str, float], snap: Snapshot,
                    step: str) -> List[Any]:
    """Job limits reached and time without progress: cheap checks from the snapshot and counters."""
    import time

    from store.monitor import alerts
    from store.monitor.clock import epoch
    from store.monitor.limits import reached

    holding = alerts.limits_hit(reached(limits, snap, whole), step) if step else []
    progress_at = epoch((snap.last or {}).get("ts")) or epoch(snap.first_ts)
    late = alerts.no_progress(limits, progress_at, snap.progress_seq, step, time.time())
    alerts.settle(c, holding, "limit:")
    return holding + ([late] if late else [])


def _fold_before_rotating(layout: Layout) -> None:
    """Fold the events into the figures before a rotation pushes old lines towards deletion."""
    from store.monitor import figures

    try:
        fig = figures.load(layout)
        figures.fold_events(fig, layout)
        figures.save(layout, fig)
    except OSError:
        pass  # the figures miss these events; the rotation must still happen
