"""What the job has cost, as far as anyone can tell: reported, estimated and projected dollars.

Claude Code reports a session's cost only when its process ends: the transcript's ``cost-state``
entry, and the result that ``baton run`` or an Agent SDK script writes into ``session`` records
(each holding what is new since the session's earlier records, so their sum is the same total). Both
are one cumulative total reported at different moments: the larger, the later, wins. A session
killed before either has no reported cost, and is counted as unreported, never as free. Where cost
is reported, it is shared among the steps of the session by their tokens weighted by Anthropic's
relative prices (input 1, output 5, cache read 0.1, cache write 1.25). The *estimate* adds, for
tokens no report covers, the price per weighted token this job's reported sessions paid; there is no
estimate before one session reports.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

RECENT_STEPS = 3  # "the last few steps" of the cost-per-step alert
MIN_DONE = 6  # done steps before an average per step means anything
RISE = 2.0  # the recent steps' average over the job's that makes an alert


class SessionCost:
    """One session's reported cost (or ``None``) and the share of its tokens that report covers."""

    __slots__ = ("reported", "uncovered", "w", "unreported")

    def __init__(self, entry: Mapping[str, Any]) -> None:
        run = entry.get("run") or {}
        tokens = sum(entry.get("tokens") or ())
        self.w: float = float(entry.get("w") or 0.0)
        self.reported: Optional[float]
        self.uncovered: float
        ran = run.get("cost_usd")
        if ran is not None and (entry.get("cost") is None or float(ran) > float(entry["cost"])):
            self.reported, self.uncovered = float(ran), 0.0  # the later of two reports of one total
        elif entry.get("cost") is not None:
            self.reported = float(entry["cost"])
            covered = int(entry.get("covered") or 0)
            self.uncovered = max(0.0, 1.0 - covered / tokens) if tokens and covered else 0.0
        elif entry.get("priced"):  # per-message prices written by older Claude Code versions
            self.reported, self.uncovered = float(entry["priced"]), 0.0
        else:
            self.reported, self.uncovered = None, 1.0
        # sessions without a reported cost: this one, or those merged into the entry of earlier sessions
        self.unreported = int(entry.get("unreported", 1 if self.reported is None else 0))

    def values(self) -> List[Any]:
        """What :meth:`of` makes the same object again from (a session's digest keeps it)."""
        return [self.reported, self.uncovered, self.w, self.unreported]

    @classmethod
    def of(cls, values: Sequence[Any]) -> SessionCost:
        cost = cls.__new__(cls)
        cost.reported, cost.uncovered, cost.w, cost.unreported = values
        return cost

    def estimated(self, rate: Optional[float]) -> Optional[float]:
        """Reported plus the unreported tokens at ``rate``; ``None`` when those cannot be priced."""
        missing = self.w * self.uncovered
        if not missing:
            return self.reported if self.reported is not None else 0.0
        return None if rate is None else (self.reported or 0.0) + missing * rate


SAVED = "session_cost"  # in a session's digest (store.monitor.stored): its SessionCost's values


def session_costs(sessions: Mapping[str, Mapping[str, Any]]) -> Dict[str, SessionCost]:
    """Each session's cost, from its entry or, where the sessions hold a digest, its saved values."""
    return {sid: SessionCost.of(entry[SAVED]) if SAVED in entry else SessionCost(entry)
            for sid, entry in sessions.items()}


def rate_of(costs: Mapping[str, SessionCost]) -> Optional[float]:
    """Dollars per weighted token over the sessions whose report covers all their tokens."""
    paid = [c for c in costs.values() if c.reported is not None and not c.uncovered and c.w > 0]
    total_w = sum(c.w for c in paid)
    return sum(c.reported or 0.0 for c in paid) / total_w if total_w else None


def step_cost(shares: Mapping[str, float], costs: Mapping[str, SessionCost],
              rate: Optional[float]) -> Dict[str, Optional[float]]:
    """A step's share of its sessions' reported and estimated cost, by its weighted tokens."""
    reported: Optional[float] = None
    estimated: Optional[float] = 0.0 if shares else None
    for sid, w in shares.items():
        cost = costs.get(sid)
        if cost is None or not cost.w:
            continue
        if cost.reported is not None:
            reported = (reported or 0.0) + cost.reported * (1.0 - cost.uncovered) * w / cost.w
        whole = cost.estimated(rate)
        estimated = None if whole is None or estimated is None else estimated + whole * w / cost.w
    return {"reported": reported, "estimated": estimated}


def reported_usd(costs: Iterable[SessionCost]) -> Optional[float]:
    """What the sessions reported, in dollars (``None``: none of them reported)."""
    reported = [c.reported for c in costs if c.reported is not None]
    return round(sum(reported), 6) if reported else None


def job_cost(costs: Mapping[str, SessionCost], rate: Optional[float]) -> Dict[str, Any]:
    estimates = [c.estimated(rate) for c in costs.values()]
    return {"reported_usd": reported_usd(costs.values()),
            "complete": bool(costs) and all(c.reported is not None and not c.uncovered and not c.unreported
                                            for c in costs.values()),
            "unreported_sessions": sum(c.unreported for c in costs.values()),
            "estimated_usd": round(sum(e for e in estimates if e is not None), 6)
            if estimates and all(e is not None for e in estimates) else None,
            "usd_per_weighted_token": rate}


def outlook(costs: Mapping[str, SessionCost], rate: Optional[float], done: Iterable[Tuple[str, Optional[float], float]],
            left: int, limit: Optional[float]) -> Tuple[Dict[str, Any], List[float], bool]:
    """The job's cost (:func:`job_cost`) with its projection and ``limit_usd``, and the cost of each
    done step in the order they were done (``done``: its time, estimated dollars and weighted
    tokens), in dollars when every done step has an estimate (then True), else in weighted tokens."""
    ordered = sorted(done, key=lambda d: d[0])
    in_usd = bool(ordered) and all(usd is not None for _, usd, _ in ordered)
    per_step = [float(usd or 0.0) if in_usd else weighted for _, usd, weighted in ordered]
    cost = job_cost(costs, rate)
    cost.update(projection(cost["estimated_usd"], per_step if in_usd else [], left), limit_usd=limit)
    return cost, per_step, in_usd


def projection(spent: Optional[float], done: Sequence[float], left: int) -> Dict[str, Optional[float]]:
    """Spent so far plus the average cost of a done step times the steps left."""
    average = sum(done) / len(done) if done else None
    recent = done[-RECENT_STEPS:]
    return {"per_done_step_usd": average,
            "recent_per_step_usd": sum(recent) / len(recent) if recent else None,
            "projected_usd": None if spent is None or average is None else spent + average * left}


def rising(done: Sequence[float]) -> Optional[float]:
    """How many times the job's average per done step the last few done steps cost, when that is
    at least :data:`RISE` and enough steps are done to tell; else ``None``."""
    if len(done) < MIN_DONE:
        return None
    average = sum(done) / len(done)
    recent = sum(done[-RECENT_STEPS:]) / RECENT_STEPS
    return recent / average if average > 0 and recent >= RISE * average else None
