"""Keeping the figures' size bounded however many sessions a job has: past :data:`KEEP_SESSIONS`,
the sessions least recently active are merged into one entry, ``*`` ("earlier sessions"), that
keeps their sums (tokens, turns, tool calls, active time, reported cost and what it covers) so the
job's totals stay exact; only their detail (runs, how each ended) is given up.
"""

from __future__ import annotations

from store.monitor import stored
from store.monitor.fold import session_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set

KEEP_SESSIONS = 300
KEEP_CLOSED = 5000  # transcripts of merged sessions whose read offset is kept, should one be resumed
EARLIER = "*"
SUMMED = ("turns", "calls", "failures", "active", "w")


def closed_key(path: str) -> str:
    """A short, stable key for a transcript path (kept for merged sessions only): its CRC-32 and length."""
    import zlib  # built in, or a small library: cheaper to load than a CRC table is to build in Python

    return f"{zlib.crc32(path.encode('utf-8', 'surrogateescape')):08x}{len(path):04x}"


def _merge(earlier: Dict[str, Any], entry: Dict[str, Any]) -> None:
    from store.monitor.costs import SessionCost

    tokens = list(entry.get("tokens") or [0, 0, 0, 0])
    earlier["tokens"] = [a + b for a, b in zip(earlier["tokens"], tokens)]
    for key in SUMMED:
        earlier[key] = (earlier.get(key) or 0) + (entry.get(key) or 0)
    cost = SessionCost(entry)
    if cost.reported is not None:
        earlier["cost"] = (earlier["cost"] or 0.0) + cost.reported
        earlier["covered"] = int(earlier.get("covered") or 0) + int(sum(tokens) * (1.0 - cost.uncovered))
    else:
        earlier["unreported"] = int(earlier.get("unreported") or 0) + 1
    for key, pick in (("first", min), ("last", max)):
        values = [v for v in (earlier.get(key), entry.get(key)) if v is not None]
        earlier[key] = pick(values) if values else None
    earlier["merged"] = int(earlier.get("merged") or 0) + 1


def track(fig: Dict[str, Any], session: str, path: str) -> None:
    """Read ``path`` (a transcript of ``session``) from now on: from the start, or where it was left
    when its session was merged (a session resumed long after)."""
    if path in fig["transcripts"]:
        return
    closed = stored.part(fig, "closed")
    offset = closed.pop(closed_key(path), 0) if closed else 0
    fig["transcripts"][path] = [session, offset, []]


def compact(fig: Dict[str, Any], keep: int = 0) -> None:
    """Merge the sessions beyond the ``keep`` (default :data:`KEEP_SESSIONS`) most recently active
    into ``*``."""
    keep = keep or KEEP_SESSIONS
    sessions: Dict[str, Dict[str, Any]] = fig["sessions"]
    detail: List[str] = [s for s in sessions if s != EARLIER]
    if len(detail) <= keep:
        return
    detail.sort(key=lambda s: sessions[s].get("last") or 0.0)
    gone: Set[str] = set(detail[:len(detail) - keep])
    earlier = session_entry(fig, EARLIER)
    for sid in gone:
        _merge(earlier, stored.session(fig, sid) or {})
        del sessions[sid]
    for step in fig["steps"].values():
        by = step.get("by") or {}
        for sid in gone & set(by):
            counts = by.pop(sid)
            mine = by.setdefault(EARLIER, [0, 0, 0, 0, 0, 0])
            by[EARLIER] = [a + b for a, b in zip(mine, counts)]
    closed: Optional[Dict[str, int]] = stored.part(fig, "closed")
    if closed is None:
        closed = fig["closed"] = {}
    for path, (sid, offset, _) in list(fig["transcripts"].items()):
        if sid in gone:
            del fig["transcripts"][path]
            closed[closed_key(path)] = offset
    while len(closed) > KEEP_CLOSED:
        closed.pop(next(iter(closed)))
