"""Who works on which step: NEXT for one worker, the steps ready to claim, and claiming them.

:func:`next_for` is the one definition of NEXT that the brief, the gate, the Stop loop, status and
``record`` all use. In a plan without ``needs`` it is the first step not done, for everyone, as it
always was. In a parallel plan it is the step this worker holds: a worker claims a ready step
(every step it needs is done, and no live worker holds it), and its lease lasts while its hooks
show activity, up to ``limits.lease_minutes`` without any. A worker is its session, unless
``BATON_WORKER`` names it. Claims are serialised with every other writer: the ledger's lock for
the file store, a transaction with ``SKIP LOCKED`` for a database. Leases are in ``leases``.
"""

from __future__ import annotations

import os

from store.base.values import Frozen
from store.plan.plan import Plan, Step
from store.state import claims, journal, leases
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

    from store.state.location import Layout

COMPLETE = ("done", "skipped")


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
    appended through ``journal.append_if`` on the whole state, serialised with every other writer
    (the file store: the first ready step without a live lease, under the ledger's lock; a
    database: the first whose row it can lock, ``SKIP LOCKED``, leases in database time)."""
    if not worker:
        return Claimed(None, False)
    held: List[str] = []

    def names(snap: Snapshot) -> List[str]:
        mine = claims.held_by(snap.claims, worker)
        if mine is not None and not is_complete(snap, mine):
            held.append(mine)
            return []
        return candidates(plan, snap, waits)

    def pick(snap: Snapshot, step: str) -> Optional[journal.Chosen]:
        if step not in {s.id for s in ready(plan, snap)}:
            return None
        if journal.shared() is None:  # the lease starts before the claim is in: no moment it looks expired
            leases.renew_file(layout, worker)
        return step, claims.CLAIM, _claim_note(worker, snap.claims.get(step)), {"worker": worker}

    def choose(snap: Snapshot) -> Optional[journal.Chosen]:  # the file store's own choice
        live = {lease.step for lease in leases.file_leases(layout, plan, snap) if lease.left > 0
                and lease.worker != worker}
        step = next((name for name in names(snap) if name not in live), None)
        return pick(snap, step) if step is not None else None

    take = journal.Take(worker, leases.lease_seconds(plan), names, pick)
    record = journal.append_if(layout, choose, take, claims_of=plan.ids)  # choose reads only the plan's steps
    if record is not None:
        if journal.shared() is None:  # a database started the lease in the claim's transaction
            leases.renew_file(layout, worker)
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


def left_running(snap: Snapshot, step: str) -> Optional[Tuple[str, str, bool]]:
    """(worker, since, released) when ``step`` was held before by a worker that left it unfinished."""
    after = (snap.claims.get(step) or {}).get("after")
    if not isinstance(after, dict):
        return None
    return str(after.get("worker") or "?"), str(after.get("ts") or "?"), bool(after.get("released"))
