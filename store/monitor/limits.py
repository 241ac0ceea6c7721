"""Job-level limits: which of the plan's ``limits`` the job has reached, from cheap counters.

Cost is the larger of the job's reported cost in the figures (``counters.json``'s ``cost_usd``, see
:mod:`store.monitor.costs`, which already counts ``session`` records) and the snapshot's sum of
``session`` records (``baton run`` and Agent SDK scripts write one per Claude Code session), which
is ahead of the figures until the next Stop or ``baton status`` catches them up.
"""

from __future__ import annotations

import time

from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional

    from store.state.job import Job

# limit name -> counters.json key holding the running total
COUNTED = {"tool_calls": "total_calls", "turns": "turns", "tokens": "tokens", "cost_usd": "cost_usd"}


def _minutes_since(ts: str, now: float) -> Optional[float]:
    """Minutes from a ledger timestamp (``YYYY-MM-DDTHH:MM:SSZ``, UTC) to ``now``."""
    try:
        y, mo, d, h, mi, s = int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19])
    except (ValueError, TypeError):
        return None
    # days since 1970-01-01 for a proleptic Gregorian date (the inverse of time.gmtime)
    yy, mm = (y - 1, mo + 12) if mo <= 2 else (y, mo)
    days = 365 * yy + yy // 4 - yy // 100 + yy // 400 + (153 * (mm - 3) + 2) // 5 + d - 719469
    return (now - (days * 86400 + h * 3600 + mi * 60 + s)) / 60.0


def reached(limits: Mapping[str, float], snap: Snapshot, counters: Mapping[str, Any],
            now: Optional[float] = None) -> List[str]:
    """One phrase per job-level limit reached, e.g. ``"tool_calls 500 of 500"``."""
    out = []
    for name, key in COUNTED.items():
        cap = limits.get(name)
        value = counters.get(key, 0)
        if name == "cost_usd" and isinstance(value, (int, float)):
            value = max(value, snap.session_cost_usd)
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


def news(limits: Mapping[str, float], snap: Snapshot, counters: Mapping[str, Any]) -> List[str]:
    """The brief's LIMIT line while a job limit is reached: what stopped, and what a person does next."""
    hit = reached(limits, snap, counters)
    if not hit:
        return []
    names = ", ".join(f"limits.{phrase.split()[0]}" for phrase in hit)
    return [f"LIMIT: {', '.join(hit)} reached: only reading is allowed; stop and tell the person. To go on, "
            f"they raise {names} in .baton/plan.json and start a session (or run baton run) again"]


def job_news(job: Job) -> List[str]:
    """The brief's lines from the hooks' counters for a loaded job: :func:`news` (when the plan sets
    limits) and the API ERROR line (:func:`store.monitor.api_errors.news`); nothing when no step is left."""
    if job.next is None:
        return []
    from store.monitor import api_errors
    from store.monitor.counters import read_counters

    counters = read_counters(job.layout)
    return (news(job.plan.limits, job.snap, counters) if job.plan.limits else []) + api_errors.news(counters, job.snap)


def external_ops(snap: Snapshot, counters: Mapping[str, Any]) -> int:
    """Operations that left the machine in the whole job, the one count ``limits.external_ops`` caps:
    ``baton once`` results (folded from the ledger into the snapshot) plus ``counters.json``'s
    ``external_ops``, where the hooks count other outgoing operations."""
    counted = counters.get("external_ops", 0)
    return snap.once_results + (int(counted) if isinstance(counted, (int, float)) else 0)
