"""Who works on which step: NEXT for one worker, the steps ready to claim, claims and their leases.

:func:`next_for` is the one definition of NEXT that the brief, the gate, the Stop loop, status and
``record`` all use. In a plan without ``needs`` it is the first step not done, for everyone, as it
always was. In a parallel plan it is the step this worker holds: a worker claims a ready step
(every step it needs is done, and no live worker holds it), and its lease lasts while its hooks
show activity, up to ``limits.lease_minutes`` without any. A worker is its session, unless
``BATON_WORKER`` names it. Claims are serialised with every other writer: the ledger's lock for
the file store, a transaction with ``SKIP LOCKED`` for a database.
"""

from __future__ import annotations

import os
import time

from store.base.text import one_line
from store.base.values import Frozen
from store.state import claims, journal
from store.state.plan import Plan, Step
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    from store.state.location import Layout

COMPLETE = ("done", "skipped")
DEFAULT_LEASE_MINUTES = 30.0
HEARTBEATS = "workers"  # folder of .baton/ whose files' mtimes are the workers' last activity (file store)


def identity(env: Mapping[str, str]) -> str:
    """This worker's name: ``BATON_WORKER``, else the Claude Code session, else user@host."""
    named = (env.get("BATON_WORKER") or "").strip() or env.get("CLAUDE_CODE_SESSION_ID") or ""
    if named:
        return named
    user = env.get("USER") or env.get("LOGNAME") or env.get("USERNAME") or "someone"
    try:
        host = os.uname().nodename
    except AttributeError:  # pragma: no cover - Windows
        host = env.get("COMPUTERNAME", "here")
    return f"{user}@{host}"


def short(worker: str) -> str:
    """A worker as the brief names it: whole when short, else its first 8 characters (a session's)."""
    return one_line(worker if len(worker) <= 16 else worker[:8], 16)


def is_complete(snap: Snapshot, step_id: str) -> bool:
    return str(snap.steps.get(step_id, {}).get("status", "")) in COMPLETE


def next_for(plan: Plan, snap: Snapshot, worker: str) -> Optional[Step]:
    """NEXT for ``worker``: in a plan without ``needs``, the first step not done; in a parallel plan,
    the step this worker holds, while it is not done (``None`` when it holds none)."""
    if not plan.parallel:
        return next((s for s in plan.steps if not is_complete(snap, s.id)), None)
    held = claims.held_by(snap.claims, worker)
    if held is None or is_complete(snap, held):
        return None
    return plan.step(held)


def all_complete(plan: Plan, snap: Snapshot) -> bool:
    return all(is_complete(snap, sid) for sid in plan.ids)


def ready(plan: Plan, snap: Snapshot) -> List[Step]:
    """Steps not done whose needs are all done, in plan order (whoever holds them)."""
    return [step for i, step in enumerate(plan.steps) if not is_complete(snap, step.id)
            and all(is_complete(snap, need) for need in plan.needs_of(i))]


def lease_seconds(plan: Plan) -> float:
    return float(plan.limits.get("lease_minutes", DEFAULT_LEASE_MINUTES)) * 60.0


class Lease(Frozen):
    """A step held by a worker: since when (ledger time), seconds since its last activity, and
    seconds of lease left (negative: expired, the step may be claimed again)."""

    __slots__ = ("step", "worker", "since", "idle", "left")

    def __init__(self, step: str, worker: str, since: str, idle: float, left: float) -> None:
        self.step, self.worker, self.since, self.idle, self.left = step, worker, since, idle, left


# ------------------------------------------------------------------ heartbeats (file store)


def heartbeat_path(layout: Layout, worker: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in worker)[:80]
    if safe != worker or not safe.strip("."):
        from hashlib import sha256

        safe = safe[:40] + "-" + sha256(worker.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return layout.root / HEARTBEATS / safe


def renew(layout: Layout, snap: Snapshot, worker: str) -> None:
    """Mark ``worker`` active now when it holds a step: the file store's lease heartbeat, one
    ``utime`` (a database marks it when the hooks refresh their copy, see ``remote``)."""
    if not worker or claims.held_by(snap.claims, worker) is None or journal.shared() is not None:
        return
    path = heartbeat_path(layout, worker)
    try:
        os.utime(path)
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o644))
        except OSError:
            pass
    except OSError:
        pass


def _epoch(ts: str) -> float:
    """Seconds since 1970 for a ledger timestamp ``YYYY-MM-DDTHH:MM:SSZ`` (0 when unreadable)."""
    try:
        y, mo, d, h, mi, s = (int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]),
                              int(ts[17:19]))
    except (ValueError, TypeError):
        return 0.0
    yy, mm = (y - 1, mo + 12) if mo <= 2 else (y, mo)
    days = 365 * yy + yy // 4 - yy // 100 + yy // 400 + (153 * (mm - 3) + 2) // 5 + d - 719469
    return float(days * 86400 + h * 3600 + mi * 60 + s)


def file_leases(layout: Layout, plan: Plan, snap: Snapshot, now: Optional[float] = None) -> List[Lease]:
    """Every step held, with its lease: last activity is the later of the claim and the holder's
    heartbeat file."""
    now = time.time() if now is None else now
    lease = lease_seconds(plan)
    out = []
    for step, entry in snap.claims.items():
        if entry.get("released"):
            continue
        worker = str(entry.get("worker") or "")
        seen = _epoch(str(entry.get("ts", "")))
        try:
            seen = max(seen, heartbeat_path(layout, worker).stat().st_mtime)
        except OSError:
            pass
        idle = max(0.0, now - seen)
        out.append(Lease(step, worker, str(entry.get("ts", "")), idle, lease - idle))
    return out


def shared_leases(plan: Plan, snap: Snapshot, rows: Sequence[Mapping[str, Any]]) -> List[Lease]:
    """Leases as a database reported them (times in database time), for the steps the snapshot holds."""
    lease = lease_seconds(plan)
    seen = {(str(r.get("step")), str(r.get("worker"))): float(r.get("idle", 0)) for r in rows}
    out = []
    for step, entry in snap.claims.items():
        if entry.get("released"):
            continue
        worker = str(entry.get("worker") or "")
        idle = seen.get((step, worker), 0.0)
        out.append(Lease(step, worker, str(entry.get("ts", "")), idle, lease - idle))
    return out


# ------------------------------------------------------------------ claiming


def candidates(plan: Plan, snap: Snapshot, waits: Callable[[str], bool]) -> List[str]:
    """Ready steps in the order a worker should take them: those that need no approval first."""
    steps = ready(plan, snap)
    return [s.id for s in steps if not waits(s.id)] + [s.id for s in steps if waits(s.id)]


class Claimed(Frozen):
    """What a claim gave: the step (``None``: nothing ready for this worker) and whether it was
    claimed now (``False``: the worker already held it)."""

    __slots__ = ("step", "new")

    def __init__(self, step: Optional[str], new: bool) -> None:
        self.step, self.new = step, new


def _claim_note(worker: str, entry: Optional[Mapping[str, Any]]) -> str:
    note = f"claimed by worker {worker}"
    if entry is not None and entry.get("worker") != worker:
        how = "which gave it back" if entry.get("released") else "whose lease expired"
        note += f" after worker {entry.get('worker')} ({how})"
    return note


def claim(layout: Layout, plan: Plan, worker: str, waits: Callable[[str], bool] = lambda s: False) -> Claimed:
    """Give ``worker`` a ready step nobody live holds (or the one it holds): one claim record,
    serialised with every other writer."""
    if not worker:
        return Claimed(None, False)
    remote = journal.shared()
    if remote is not None:
        return _claim_shared(remote, layout, plan, worker, waits)
    held: List[str] = []

    def choose(snap: Snapshot) -> Optional[journal.Chosen]:
        mine = claims.held_by(snap.claims, worker)
        if mine is not None and not is_complete(snap, mine):
            held.append(mine)
            return None
        live = {lease.step for lease in file_leases(layout, plan, snap) if lease.left > 0 and lease.worker != worker}
        for step in candidates(plan, snap, waits):
            if step not in live:
                return step, claims.CLAIM, _claim_note(worker, snap.claims.get(step)), {"worker": worker}
        return None

    record = journal.append_if(layout, choose)
    if record is not None:
        renew_file(layout, worker)
        return Claimed(str(record["step"]), True)
    return Claimed(held[0], False) if held else Claimed(None, False)


def renew_file(layout: Layout, worker: str) -> None:
    path = heartbeat_path(layout, worker)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o644))
        os.utime(path)
    except OSError:
        pass


def _claim_shared(remote: Any, layout: Layout, plan: Plan, worker: str, waits: Callable[[str], bool]) -> Claimed:
    held: List[str] = []

    def names(snap: Snapshot) -> List[str]:
        mine = claims.held_by(snap.claims, worker)
        if mine is not None and not is_complete(snap, mine):
            held.append(mine)
            return []
        return candidates(plan, snap, waits)

    def choose(snap: Snapshot, step: str) -> Optional[journal.Chosen]:
        if is_complete(snap, step) or step not in {s.id for s in ready(plan, snap)}:
            return None
        return step, claims.CLAIM, _claim_note(worker, snap.claims.get(step)), {"worker": worker}

    record = remote.claim(layout, worker, lease_seconds(plan), names, choose, journal.fields)
    if record is not None:
        return Claimed(str(record["step"]), True)
    return Claimed(held[-1], False) if held else Claimed(None, False)


def release(layout: Layout, snap: Snapshot, worker: str, why: str) -> Optional[Dict[str, Any]]:
    """Give back the step ``worker`` holds (a release record), so another may claim it now."""
    step = claims.held_by(snap.claims, worker)
    if step is None:
        return None
    return journal.append(layout, step, claims.RELEASE, why, worker=worker)


# ------------------------------------------------------------------ words for the brief


def idle_next(plan: Plan, snap: Snapshot, worker: str, waits: Callable[[str], bool]) -> str:
    """What NEXT says in a parallel plan when this worker holds no step (and the job is not done)."""
    steps = ready(plan, snap)
    free = [s.id for s in steps if claims.holder(snap.claims, s.id) in (None, worker)]
    if free and any(not waits(s) for s in free):
        return "(no step claimed by you: run baton claim to take a ready one)"
    held = sum(1 for s in steps if claims.holder(snap.claims, s.id) not in (None, worker))
    waiting = len(plan.steps) - len(steps) - sum(1 for sid in plan.ids if is_complete(snap, sid))
    parts = [f"{held} held by other workers"] if held else []
    parts += [f"{len(free)} waiting for a person's approval"] if free else []
    parts += [f"{waiting} waiting for steps not done yet"] if waiting else []
    return f"(nothing ready for you now: {', '.join(parts) or 'no step is ready'} - stop)"


def others_line(leases: Sequence[Lease], worker: str) -> Optional[str]:
    """One bounded line on what the other workers are doing."""
    others = [lease for lease in leases if lease.worker != worker]
    if not others:
        return None
    parts = []
    for lease in sorted(others, key=lambda item: item.idle):
        state = f"active {_ago(lease.idle)} ago" if lease.left > 0 else f"lease expired {_ago(-lease.left)} ago"
        parts.append(f"{one_line(lease.step, 40)} ({short(lease.worker)}, {state})")
    head = f"OTHERS: {len(others)} other worker{'s' if len(others) != 1 else ''}: "
    line = head + "; ".join(parts)
    return line if len(line) <= 250 else line[:248] + " \u2026"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def left_running(snap: Snapshot, step: str) -> Optional[Tuple[str, str, bool]]:
    """(worker, since, released) when ``step`` was held before by a worker that left it unfinished."""
    after = (snap.claims.get(step) or {}).get("after")
    if not isinstance(after, dict):
        return None
    return str(after.get("worker") or "?"), str(after.get("ts") or "?"), bool(after.get("released"))
