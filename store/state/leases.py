"""Leases on claimed steps: a worker's claim lasts while its hooks show activity, up to
``limits.lease_minutes`` without any; and the one line the brief gives on the other workers.

The file store keeps each worker's last activity as the change time (``st_ctime``) of an empty
file in ``.baton/workers/`` (one ``utime`` per hook call, no ledger record), and reads "now" the
same way, from a file it has just touched (:func:`fs_now`). Change times are set by the kernel (or
the file server) from its one clock, whatever a process's own clock says: a worker whose clock is
20 minutes ahead or behind (libfaketime, a wrong time zone setting, a container's clock) neither
takes a live worker's step nor makes its own lease look expired. A process's own clock and the
ledger's times are used only where there is no heartbeat to judge by (a fresh clone, a read-only
folder). A database keeps the lease in the claim's row, in its own clock (``store.state.remote``).
"""

from __future__ import annotations

import os
import time

from store.base.text import one_line
from store.base.values import Frozen
from store.plan.plan import Plan
from store.state import claims, journal
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, List, Mapping, Optional, Sequence

    from store.state.location import Layout

DEFAULT_LEASE_MINUTES = 30.0
HEARTBEATS = "workers"  # folder of .baton/ whose files' change times are the workers' last activity (file store)
CLOCK = "~now"  # touched to read the file system's clock; no worker's heartbeat has a "~" (heartbeat_path)


def lease_seconds(plan: Plan) -> float:
    return float(plan.limits.get("lease_minutes", DEFAULT_LEASE_MINUTES)) * 60.0


class Lease(Frozen):
    """A step held by a worker: since when (ledger time), seconds since its last activity, and
    seconds of lease left (negative: expired, the step may be claimed again)."""

    __slots__ = ("step", "worker", "since", "idle", "left")

    def __init__(self, step: str, worker: str, since: str, idle: float, left: float) -> None:
        self.step, self.worker, self.since, self.idle, self.left = step, worker, since, idle, left


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


def epoch(ts: str) -> float:
    """Seconds since 1970 for a ledger timestamp ``YYYY-MM-DDTHH:MM:SSZ`` (0 when unreadable)."""
    try:
        y, mo, d, h, mi, s = (int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]),
                              int(ts[17:19]))
    except (ValueError, TypeError):
        return 0.0
    yy, mm = (y - 1, mo + 12) if mo <= 2 else (y, mo)
    days = 365 * yy + yy // 4 - yy // 100 + yy // 400 + (153 * (mm - 3) + 2) // 5 + d - 719469
    return float(days * 86400 + h * 3600 + mi * 60 + s)


def fs_now(layout: Layout) -> Optional[float]:
    """The file system's clock now: the change time of a file this process has just touched
    (``None`` when it cannot be touched: a read-only folder). ``utime`` may be given a process's
    own idea of the time (libfaketime does that), but the change time it causes is the kernel's."""
    path = layout.root / HEARTBEATS / CLOCK
    try:
        try:
            os.utime(path)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o644))
        return os.stat(path).st_ctime
    except OSError:
        return None


def file_leases(layout: Layout, plan: Plan, snap: Snapshot, now: Optional[float] = None) -> List[Lease]:
    """Every step held, with its lease: seconds since the holder's heartbeat changed, by the file
    system's clock (see the module's docstring). ``now`` (a process time, for tests) looks ahead by
    ``now - time.time()``. Without a heartbeat or a writable folder: the later of the claim's ledger
    time and the heartbeat's modification time, against this process's clock (the old way)."""
    ahead = 0.0 if now is None else now - time.time()
    clock = fs_now(layout)
    lease = lease_seconds(plan)
    out = []
    for step, entry in snap.claims.items():
        if entry.get("released"):
            continue
        worker = str(entry.get("worker") or "")
        try:
            beat: Optional[os.stat_result] = heartbeat_path(layout, worker).stat()
        except OSError:
            beat = None
        if clock is not None and beat is not None:
            idle = max(0.0, clock + ahead - beat.st_ctime)
        else:
            seen = max(epoch(str(entry.get("ts", ""))), beat.st_mtime if beat is not None else 0.0)
            idle = max(0.0, time.time() + ahead - seen)
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


def renew_file(layout: Layout, worker: str) -> None:
    path = heartbeat_path(layout, worker)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o644))
        os.utime(path)
    except OSError:
        pass



# ------------------------------------------------------------------ words for the brief


def short(worker: str) -> str:
    """A worker as the brief names it: whole when short, else its first 8 characters (a session's)."""
    return one_line(worker if len(worker) <= 16 else worker[:8], 16)


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
