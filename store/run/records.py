"""The ledger records a supervisor writes: one ``session`` record per Claude Code session, a ``stop``.

A ``session`` record carries the session id, how it ended (:data:`ENDINGS`), its cost and turns when
Claude Code reported them, and the process's exit code; like ``stop`` it is not step progress (the
brief's LAST line and the snapshot's step states ignore it). Claude Code reports a resumed session's
``total_cost_usd`` cumulatively, so each record keeps only what is new since the same session's
earlier records. A session that parked a call until NEXT's approval (``ended: parked``) keeps the
call in ``parked``. A ``stop`` record says why the run stopped and what a person does next.
"""

from __future__ import annotations

from store.base.errors import BatonError
from store.run.stream import ENDINGS
from store.state import journal
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

LOOK_BACK = 500  # records searched for a resumed session's earlier cost
COST_DIGITS = 10


def recorded_cost(layout: Layout, session_id: str) -> float:
    """What earlier ``session`` records of ``session_id`` (among the last LOOK_BACK) already counted."""
    if not session_id:
        return 0.0
    records, _ = journal.last_records(layout, LOOK_BACK)  # in the job's database, when it is kept there
    return sum(float(r["cost_usd"]) for r in records
               if r.get("status") == "session" and r.get("session") == session_id
               and isinstance(r.get("cost_usd"), (int, float)) and not isinstance(r.get("cost_usd"), bool))


def record_session(layout: Layout, step: str, session_id: str, ended: str, note: str = "",
                   total_cost_usd: Optional[float] = None, turns: Optional[int] = None,
                   exit_code: Optional[int] = None, parked: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Append the ``session`` record of one Claude Code session and return it (``parked``: the call
    it parked, and the ``step`` whose approval it waits for; a later run resumes the session there)."""
    if ended not in ENDINGS:
        raise BatonError(f"unknown session ending {ended!r}; valid: {', '.join(ENDINGS)}")
    note = f"{ended}: {note}" if note else ended  # `baton log` shows the note: say how it ended first
    extra: Dict[str, Any] = {"session": session_id, "ended": ended}
    if total_cost_usd is not None:
        new = total_cost_usd - recorded_cost(layout, session_id)
        extra["cost_usd"] = round(max(new, 0.0), COST_DIGITS)
    if turns is not None:
        extra["turns"] = turns
    if exit_code is not None:
        extra["exit"] = exit_code
    if parked:
        extra["parked"] = {k: str(parked.get(k) or "")[:200] for k in ("id", "tool", "what", "step")}
    return journal.append(layout, step, "session", note, **extra)


def parked_on(layout: Layout, step: str) -> Optional[Dict[str, Any]]:
    """The latest ``session`` record when that session parked a call that waits for ``step``'s approval
    (``None`` otherwise): the session a run resumes at that call once ``step`` is approved. Only the
    latest counts: a later session means the parked one was given up."""
    records, _ = journal.last_records(layout, LOOK_BACK)
    latest = next((r for r in reversed(records) if r.get("status") == "session"), None)
    held = latest.get("parked") if latest is not None else None
    if latest is None or latest.get("ended") != "parked" or not isinstance(held, dict) or held.get("step") != step:
        return None
    return latest if latest.get("session") else None


def record_stop(layout: Layout, step: str, outcome: str, note: str) -> Dict[str, Any]:
    """Append the run's ``stop`` record: ``outcome`` names why, ``note`` says what to do next."""
    return journal.append(layout, step, "stop", note, session="", outcome=outcome, via="baton run")
