"""The clone's copy of a job kept in a database (``.baton/shared.json``): when a hook may answer
from it, refreshing it in a detached process, and the view it gives, with the records still
queued shown as written (they are acknowledged).

Hooks that only read (the gate, PostToolUse, Stop) trust a copy younger than
:data:`FRESH_SECONDS`, and one younger than :data:`STALE_SECONDS` while a detached process
refreshes it (so the hook does not wait for psycopg and the server). After a failed contact the
copy answers, with its error, until :data:`RETRY_SECONDS` have passed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from store.backend.driver import Unreachable
from store.backend.local import Local
from store.backend.postgres import Built, SharedJob
from store.base import jsonc
from store.state import claims
from store.state.snapshot import BY_SEQ, VERSION, Loaded, Snapshot, key_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List

    from store.state.location import Layout

FRESH_SECONDS = 30.0  # how old a copy the gate and PostToolUse may use (the worker's lease renews this often)
STALE_SECONDS = 300.0  # older than this, a hook asks the server itself rather than in the background
RETRY_SECONDS = 5.0  # after a failed contact, hooks on the hot path wait this long before trying again
REFRESH_LOCK = "refresh.lock"
RECENT = 50  # the last records the copy keeps, for `log`, `status` and `report` while the server is down


class SharedLoaded(Loaded):
    """A snapshot read from (or for) a database, with what the local copy adds: the claims'
    leases, the error when the server could not be reached, and the records still queued."""

    __slots__ = ("leases", "problem", "queued", "fetched", "since")

    def __init__(self, snapshot: Snapshot, leases: List[Dict[str, Any]], problem: str, queued: int,
                 fetched: float, since: float = 0.0) -> None:
        super().__init__(snapshot, 0, False)
        self.leases, self.problem, self.queued = leases, problem, queued
        self.fetched, self.since = fetched, since  # when the copy was read; since when the server is unreachable


def current(cache: Dict[str, Any]) -> bool:
    """True when the copy holds a snapshot this version of baton reads (an older one is read again)."""
    return "snapshot" in cache and cache.get("version") == VERSION


def copy_will_do(layout: Layout, cache: Dict[str, Any], worker: str) -> bool:
    """Whether a hot-path hook may answer from the clone's copy: it is fresh; or it is less than
    STALE_SECONDS old and a detached process is (now) refreshing it. After a failed contact the
    copy, with its error, answers until RETRY_SECONDS have passed (the gate then denies)."""
    now = time.time()
    age = now - float(cache.get("fetched", 0))
    if cache.get("error"):
        if now - float(cache.get("failed", 0)) < RETRY_SECONDS:
            return True
        return age < STALE_SECONDS and refresh_in_background(layout, worker)
    return age < FRESH_SECONDS or (age < STALE_SECONDS and refresh_in_background(layout, worker))


def refresh_in_background(layout: Layout, worker: str) -> bool:
    """Start a detached ``journal.refresh_shared`` for this clone, unless one is running; False
    where processes cannot be spawned so (the caller then asks the server itself)."""
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None:
        return False
    if refresh_running(layout):
        return True
    root = str(Path(__file__).resolve().parents[2])
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from store.state import journal; "
            "journal.refresh_shared(sys.argv[2], sys.argv[3], sys.argv[4])")
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        spawn(sys.executable, [sys.executable, "-S", "-c", code, root, str(layout.root), str(layout.project),
                               worker], dict(os.environ), file_actions=quiet, setsid=True)
    except OSError:
        return False
    return True


def refresh_running(layout: Layout) -> bool:
    """True when a refresh of this clone's copy holds ``refresh.lock`` now."""
    from store.base import durable

    try:
        return durable.held(layout.root / REFRESH_LOCK)
    except OSError:
        return False


def fetched(name: str, snap: Snapshot, job: SharedJob, server_now: float = 0.0) -> Dict[str, Any]:
    """The copy as just read; ``skew``: how far the server's clock is ahead of this machine's
    (a record queued here is timed by the server's clock as this measured it)."""
    now = time.time()
    return {"job": name, "fetched": now, "version": VERSION, "snapshot": snap.to_bytes().decode("ascii"),
            "leases": leases_of(job), "skew": server_now - now if server_now else 0.0,
            "recent": job.last_lines(RECENT)}


def leases_of(job: SharedJob) -> List[Dict[str, Any]]:
    return [{"step": lease.step, "worker": lease.worker, "age": lease.age, "idle": lease.idle}
            for lease in job.leases()]


def _seq(line: str) -> int:
    try:
        return int(jsonc.loads(line).get("seq", 0))
    except (ValueError, TypeError, AttributeError):
        return 0


def fold(snap: Snapshot, record: Dict[str, Any]) -> None:
    """Apply ``record`` to ``snap`` with its ``seq`` as its place (a database has no byte offsets):
    where the file store keeps an offset into ``steps.jsonl``, a checkpoint's record is marked
    (``BY_SEQ``: found by its seq) and a ``baton once`` key's latest record is left out."""
    snap.apply(record, int(record["seq"]), start=0)
    step = snap.steps.get(str(record.get("step", "")))
    if step is not None and step.get("seq") == record.get("seq") and step.pop("at", None) is not None:
        step[BY_SEQ] = True
    key = record.get("key")
    if isinstance(key, str):
        snap.once_pending.pop(key_digest(key), None)


def from_copy(cache: Dict[str, Any], local: Local) -> SharedLoaded:
    raw = cache.get("snapshot")
    snap = Snapshot.from_bytes(raw.encode("ascii")) if isinstance(raw, str) else None
    snap = snap or Snapshot()
    queued = local.queued()
    for number, entry in enumerate(queued, 1):  # acknowledged, so shown as done, though not yet in the chain
        record = {"seq": snap.seq + number, "hash": "queued", "prev": "queued", "ts": entry["extra"].get("ts", ""),
                  "step": entry["step"], "status": entry["status"], "note": entry["note"], **entry["extra"]}
        fold(snap, record)
    fetched = float(cache.get("fetched", 0))
    late = max(0.0, time.time() - fetched) if fetched else 0.0
    leases = [dict(lease, idle=float(lease.get("idle", 0)) + late, age=float(lease.get("age", 0)) + late)
              for lease in cache.get("leases", []) if isinstance(lease, dict)]
    problem = str(cache.get("error") or "")
    return SharedLoaded(snap, leases, problem, len(queued), fetched, float(cache.get("since") or 0))


def after_write(local: Local, job: SharedJob, built: Built) -> None:
    """Keep the copy current after this clone wrote ``built`` (so its own hooks see it at once)."""
    if not built.snapshot:  # a record written before: the cache is refreshed by the next read
        return
    cache = local.read_cache()
    recent = [line for line in cache.get("recent", []) if isinstance(line, str)]
    follows = bool(recent) and _seq(recent[-1]) == built.seq - 1  # the copy's records end just before it
    cache.update(job=job.name, fetched=time.time(), version=VERSION, snapshot=built.snapshot,
                 recent=[*recent, built.line][-RECENT:] if follows else [built.line])
    for key in ("error", "failed", "since"):
        cache.pop(key, None)
    if built.status in claims.SYSTEM or built.status in claims.ENDS:
        try:
            cache["leases"] = leases_of(job)
        except Unreachable:
            cache.pop("leases", None)
    local.write_cache(cache)
