"""A new record's attempt number, and when a record only repeats the step's latest one (a retry).

A retry is a record with the same step, status, note and session as that step's latest record,
written less than :data:`RETRY_SECONDS` ago: a caller that did not see the first answer (killed,
timed out, or told wrongly that it failed) and asked again. It is not new information, so it is
not appended twice. A different note, another session or a later attempt is always recorded.
"""

from __future__ import annotations

import time

from store.state.snapshot import STEP_STATUSES, Snapshot, note_view

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

RETRY_SECONDS = 600
SLACK_SECONDS = 5  # a record's whole-second time, or a clock known only to a round trip, may run a little ahead


def number(snap: Snapshot, step: str, status: str) -> int:
    """The attempt number of a new record: a step's first record is attempt 1; a step record after
    one that was not ``running`` starts the next attempt; anything else keeps the current one."""
    prior = snap.steps.get(step)
    if prior is None:
        return 1
    try:
        current = int(prior.get("attempt") or 1)
    except (TypeError, ValueError):
        current = 1
    if status not in STEP_STATUSES:
        return current
    return current if prior.get("status") == "running" else current + 1


def epoch(ts: Any) -> float:
    """Seconds since 1970 of a record's ``ts`` (``inf`` when it is not one)."""
    try:
        import calendar

        return float(calendar.timegm(time.strptime(str(ts), "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, OverflowError):
        return float("inf")


def retry_of(snap: Snapshot, fields: Mapping[str, Any], now: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """The step's latest record when ``fields`` repeat it (same status, note and session) within
    RETRY_SECONDS of ``now`` (this process's clock when not given; a database's own clock, or the
    time a queued record was asked, where the records' times come from it): a caller that did not
    see the first answer, not new information."""
    prior = snap.steps.get(fields["step"])
    if fields["status"] not in STEP_STATUSES or prior is None:
        return None
    note = note_view(fields["note"])  # the snapshot keeps a long note's start and digest
    if (prior.get("status"), prior.get("note"), prior.get("note_sha"), prior.get("session") or "") != (
            fields["status"], note["note"], note.get("note_sha"), fields["session"]):
        return None
    since = (time.time() if now is None else now) - epoch(prior.get("ts"))
    return {"step": fields["step"], **prior} if -SLACK_SECONDS <= since <= RETRY_SECONDS else None
