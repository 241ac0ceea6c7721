"""Tool outcomes from PostToolUse: a bounded events file, counters, and alerts at thresholds.

``events.jsonl`` keeps one compact line per outcome and rotates at :data:`EVENTS_CAP` bytes (one
old file kept). ``counters.json`` keeps what the alerts and limits need: calls and failures since
the last ledger record, identical failures in a row, files changed by the current step, and the
job's total tool calls, the job's operations that left the machine (``external_ops``, see
:func:`take_external`). Counters reset when the ledger gains a record or NEXT moves on (the job's
totals do not).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from store.base import durable
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

EVENTS_CAP = 1024 * 1024
KEEP_FILES = 200
DEFAULTS = {"calls_without_record": 25, "repeated_failures": 3}


def _read_json(path: Path) -> Dict[str, Any]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def shown_path(path: str, project: str) -> str:
    """How a changed file is recorded: resolved and project-relative, or absolute when outside."""
    from store.base.paths import relative

    rel = relative(os.path.realpath(path), os.path.realpath(project))
    return rel if rel is not None else path


def read_counters(layout: Layout) -> Dict[str, Any]:
    return _read_json(layout.counters)


def save_counters(layout: Layout, counters: Mapping[str, Any]) -> None:
    """Replace counters.json; call it holding ``layout.hooks_lock``, as every writer does."""
    durable.atomic_write(layout.counters, json.dumps(counters, separators=(",", ":")).encode(), sync=False)


def take_external(layout: Layout, count: int, cap: Optional[float]) -> Optional[int]:
    """Add ``count`` operations that leave the machine to the job's total (``external_ops`` in
    counters.json, the one count every caller shares: the gate for Bash, WebFetch and MCP calls,
    ``baton once`` for its results); None, adding nothing, when that would pass ``cap``."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with durable.locked(layout.hooks_lock):
        counters = read_counters(layout)
        total = int(counters.get("external_ops", 0)) + count
        if cap and total > cap:
            return None
        counters["external_ops"] = total
        save_counters(layout, counters)
    return total


def append_event(layout: Layout, event: Mapping[str, Any]) -> None:
    path = layout.events
    try:
        if path.stat().st_size > EVENTS_CAP:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    line = json.dumps(event, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"
    durable.append_line(path, line, sync=False)


def _fresh_for(counters: Dict[str, Any], seq: int, step: str) -> Dict[str, Any]:
    if counters.get("seq") != seq:
        counters.update(seq=seq, calls_since_record=0, failures_since_record=0)
    if counters.get("step") != step:
        counters.update(step=step, changed=[], changed_count=0)
    return counters


def update(layout: Layout, event: Mapping[str, Any], seq: int, step: str, limits: Mapping[str, float]) -> List[str]:
    """Fold one outcome in; return the alerts (for the model) that this outcome crosses."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with durable.locked(layout.hooks_lock):
        append_event(layout, event)
        c = _fresh_for(read_counters(layout), seq, step)
        c["total_calls"] = int(c.get("total_calls", 0)) + 1
        c["calls_since_record"] = int(c.get("calls_since_record", 0)) + 1
        alerts = []
        if event.get("ok"):
            c.update(consecutive_failures=0, last_failure="")
        else:
            c["failures_since_record"] = int(c.get("failures_since_record", 0)) + 1
            sig = f"{event.get('tool')}|{event.get('target')}|{event.get('error')}"
            same = c.get("last_failure") == sig
            c.update(consecutive_failures=int(c.get("consecutive_failures", 0)) + 1 if same else 1, last_failure=sig)
            every = int(limits.get("repeated_failures", DEFAULTS["repeated_failures"]))
            if c["consecutive_failures"] % every == 0:
                alerts.append(f"baton: the same {event.get('tool')} call failed {c['consecutive_failures']} times in "
                              f"a row ({event.get('target')}: {event.get('error')}). Do not retry it unchanged: read "
                              "the error, change approach, or record the step failed.")
        for target in event.get("changed", ()):
            if target not in c["changed"]:
                c["changed_count"] = int(c.get("changed_count", 0)) + 1
                if len(c["changed"]) < KEEP_FILES:
                    c["changed"].append(target)
        every = int(limits.get("calls_without_record", DEFAULTS["calls_without_record"]))
        if step and c["calls_since_record"] % every == 0:
            alerts.append(f"baton: {c['calls_since_record']} tool calls since the last recorded step. If {step} is "
                          f"done, record it now: baton record {step} done \"<what you produced>\"")
        cap = limits.get("changed_files")
        if cap and step and c["changed_count"] > cap and event.get("changed"):
            alerts.append(f"baton: step {step} has changed {c['changed_count']} files, over the job's limit of "
                          f"{int(cap)}; further writes are refused until the step is recorded.")
        save_counters(layout, c)
    return alerts
