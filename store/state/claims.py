"""Claims folded from the ledger: which worker holds which step of a parallel plan.

A ``claim`` record gives its step to the record's ``worker``; a ``release`` record by that worker
gives it back; ``done`` or ``skipped`` ends the claim. An entry stays after a release so that the
next claimant learns the step was started and left (``after``). Claims and releases are system
records: they are not progress and never appear as LAST. A record another branch's ledger brought
in (``baton merge`` marks it ``merged``) changes a claim only when it is later than the claim it
would replace, as merged step records do in the snapshot; and a ``done`` or ``skipped`` that is
the step's state after a merge ends a claim the other branch made later, not knowing it done
(``Snapshot.apply`` drops it).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

CLAIM, RELEASE = "claim", "release"
SYSTEM = (CLAIM, RELEASE)
ENDS = ("done", "skipped")


def fold(claims: Dict[str, Dict[str, Any]], record: Mapping[str, Any]) -> None:
    """Apply one ledger record to ``claims`` (step -> entry); records of other statuses are ignored."""
    status = record.get("status")
    if status not in SYSTEM and status not in ENDS:
        return
    step, ts = str(record.get("step", "")), str(record.get("ts", ""))
    held = claims.get(step)
    if "merged" in record and held is not None and str(held.get("ts", "")) > ts:
        return  # an older record of another branch: the claim made here since stands
    if status in ENDS:
        claims.pop(step, None)
        return
    worker = str(record.get("worker") or "")
    if status == RELEASE:
        if held is not None and held.get("worker") == worker:
            held["released"] = ts
        return
    later = ""  # a claim this worker made after a merged one: the merged one was given back then
    for other, entry in claims.items():  # one step per worker: a new claim gives back any other
        if other == step or entry.get("worker") != worker or entry.get("released"):
            continue
        if "merged" in record and str(entry.get("ts", "")) > ts:
            later = str(entry.get("ts", ""))
        else:
            entry["released"] = ts
    entry = {"worker": worker, "seq": record.get("seq"), "ts": ts, "session": str(record.get("session") or "")}
    if later:
        entry["released"] = later
    if held is not None and (held.get("worker") != worker or held.get("released")):
        entry["after"] = {"worker": held.get("worker"), "ts": held.get("ts"),
                          "released": held.get("released") or ""}
    elif held is not None and held.get("after"):
        entry["after"] = held["after"]
    claims[step] = entry


def holder(claims: Mapping[str, Mapping[str, Any]], step: str) -> Optional[str]:
    """The worker holding ``step`` (``None`` when nobody does, or it was given back)."""
    entry = claims.get(step)
    if entry is None or entry.get("released"):
        return None
    return str(entry.get("worker") or "")


def held_by(claims: Mapping[str, Mapping[str, Any]], worker: str) -> Optional[str]:
    """The step ``worker`` holds, if any (at most one)."""
    if not worker:
        return None
    for step, entry in claims.items():
        if entry.get("worker") == worker and not entry.get("released"):
            return step
    return None
