"""Each session of a job as people see it: when it ran, how it ended, what it did and cost.

A session ends as Claude Code said (SessionEnd's ``reason``: ``other`` at a normal end, ``clear``,
``logout``...) or as ``baton run`` recorded (``completed``, ``killed``, ``api_error``...). One with
no end seen is ``open`` while nothing came after it, and ``lost`` (killed or crashed) once a later
session or a later run of it started (in the same second as its last sign of life counts once
that session was seen in a later second: times are whole seconds).
"""

from __future__ import annotations

from store.monitor.clock import iso
from store.monitor.costs import SessionCost
from store.monitor.transcript import KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


def tokens_of(counts: List[int]) -> Dict[str, int]:
    out = dict(zip(KINDS, (int(n) for n in counts)))
    out["total"] = sum(out.values())
    return out


def when(seconds: Optional[float]) -> Optional[str]:
    return iso(seconds) if seconds is not None else None


def ended(sid: str, entry: Mapping[str, Any], later: Sequence[Tuple[float, float]]) -> str:
    """How the session's latest run ended: the runner's word, Claude Code's reason, open, or lost
    (``later``: (first, last) of each other session that began at or after this one)."""
    run = entry.get("run") or {}
    if run.get("ended"):
        return str(run["ended"])
    runs = entry.get("runs") or []
    if runs and runs[-1][1] is not None:
        return str(runs[-1][2] or "other")
    last = entry.get("last") or 0.0
    return "lost" if _outlived(entry.get("first") or last, last, later) else "open"


def _outlived(first: float, last: float, later: Sequence[Tuple[float, float]]) -> bool:
    """Whether a session seen from ``first`` to ``last`` was followed by another: one began in a later
    second than ``last``; or began in that very second, when this one had been working (seen past
    its own first second) and the other has been seen in a later second since. Times are whole
    seconds (a record counts as the end of its second): so a session killed in the second the next
    one began is lost once that one goes on, and sessions started together stay open."""
    second = int(last)
    tie = second > int(first)
    return any(int(began) > second or (tie and int(began) == second and int(seen) > second) for began, seen in later)


def view(sid: str, entry: Mapping[str, Any], later: Sequence[Tuple[float, float]], cost: SessionCost) -> Dict[str, Any]:
    runs = entry.get("runs") or []
    how = ended(sid, entry, later)
    start = runs[0][0] if runs else entry.get("first")
    end = runs[-1][1] if runs and runs[-1][1] is not None else (entry.get("last") if how != "open" else None)
    shown_runs = [{"start": when(r[0]), "end": when(r[1] if r[1] is not None or how == "open" else entry.get("last")),
                   "ended": (r[2] or "other") if r[1] is not None else how} for r in runs]
    return {"id": sid, "start": when(start), "end": when(end), "ended": how,
            "source": entry.get("source", ""), "runs": shown_runs,
            "active_s": round(float(entry.get("active") or 0.0), 3), "turns": int(entry.get("turns") or 0),
            "tokens": tokens_of(entry.get("tokens") or [0, 0, 0, 0]),
            "cost_usd": cost.reported, "cost_complete": cost.reported is not None and not cost.uncovered,
            "calls": int(entry.get("calls") or 0), "failures": int(entry.get("failures") or 0),
            "commands": int(entry.get("commands") or 0), "transcript": entry.get("transcript", "")}


def views(fig: Mapping[str, Any], costs: Mapping[str, SessionCost]) -> List[Dict[str, Any]]:
    """Every session, in the order they were first seen; past a few hundred, the earliest as one
    entry with the id ``*`` (see :mod:`store.monitor.compact`)."""
    sessions = fig["sessions"]
    ordered = sorted(sessions, key=lambda s: sessions[s].get("first") or 0.0)
    spans = [(sessions[s].get("first") or 0.0, sessions[s].get("last") or sessions[s].get("first") or 0.0)
             for s in ordered]
    out = []
    for index, sid in enumerate(ordered):  # the others that began at or after this one (a few hundred at most)
        later = [span for other, span in enumerate(spans) if other != index and span[0] >= spans[index][0]]
        out.append(view(sid, sessions[sid], later, costs[sid]))
        if sid == "*":
            out[-1].update(ended=f"{sessions[sid].get('merged', 0)} earlier sessions", runs=[])
    return out


def count(fig: Mapping[str, Any]) -> int:
    """How many sessions the job had, those merged into ``*`` included."""
    sessions = fig["sessions"]
    return len(sessions) - ("*" in sessions) + int((sessions.get("*") or {}).get("merged") or 0)
