"""Job-level limits: which of the plan's ``limits`` the job has reached, from cheap counters."""

from __future__ import annotations

import calendar
import time
from typing import Any, List, Mapping, Optional

from store.snapshot import Snapshot

# limit name -> counters.json key holding the running total
COUNTED = {"tool_calls": "total_calls", "turns": "turns", "tokens": "tokens", "cost_usd": "cost_usd"}


def _minutes_since(ts: str, now: float) -> Optional[float]:
    try:
        start = calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, TypeError):
        return None
    return (now - start) / 60.0


def reached(limits: Mapping[str, float], snap: Snapshot, counters: Mapping[str, Any],
            now: Optional[float] = None) -> List[str]:
    """One phrase per job-level limit reached, e.g. ``"tool_calls 500 of 500"``."""
    out = []
    for name, key in COUNTED.items():
        cap = limits.get(name)
        value = counters.get(key, 0)
        if cap and isinstance(value, (int, float)) and value >= cap:
            out.append(f"{name} {value:g} of {cap:g}")
    cap = limits.get("wall_minutes")
    if cap and snap.first_ts:
        spent = _minutes_since(snap.first_ts, time.time() if now is None else now)
        if spent is not None and spent >= cap:
            out.append(f"wall_minutes {spent:.0f} of {cap:g}")
    return out


def step_files_over(limits: Mapping[str, float], counters: Mapping[str, Any], step: str) -> bool:
    cap = limits.get("changed_files")
    return bool(cap) and counters.get("step") == step and int(counters.get("changed_count", 0)) >= int(cap or 0)
