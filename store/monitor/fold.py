"""Folding a ledger record into the job's figures: attempts, NEXT over time, approval waits,
validation and artifacts; and the entries and activity every fold shares. Pure functions over
the figures' JSON dict (see :mod:`store.monitor.figures`; events and transcripts: ``tally``), whose
sessions, steps' bars and long lists a hook's fold reads through :mod:`store.monitor.stored`,
which decodes them when they are still as the file holds them.

A step's spend is what happened while it was NEXT: its attempts run from the moment it became NEXT
(or its ``running`` record, or the start of the session that worked on it) to its record, and a
model response belongs to the step that was NEXT when it was written. Ledger times have whole
seconds, so a record's moment is taken as the end of its second.
"""

from __future__ import annotations

from store.monitor import stored
from store.monitor.clock import epoch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence


# relative prices of input, output, cache-read and cache-write tokens (the same for every current
# Claude model); used only to share a reported cost among steps and to estimate unreported cost
WEIGHTS = (1.0, 5.0, 0.1, 1.25)
IDLE = 300.0  # a gap longer than this without any activity is idle time, not active time
HISTORY = 256
KEEP_BARS = 50
KEEP_FILES = 200
KEEP_ALERTS = 200
KEEP_MARKS = 1000  # times of the latest tool failures, for the report's timeline
KEEP_REFUSED = 200  # the latest gate refusals, what was refused and why, for the report
KEEP_EFFECTS = 400  # the latest `baton once` intents and results
KEEP_APPROVALS = 200
KEEP_NOTES, NOTE_CHARS = 4, 300  # notes kept per attempt (running, failed, done...), and their length
COMPLETE = ("done", "skipped")
STEP_STATUSES = ("running", "done", "failed", "skipped")
VALIDATE_FAILED = ("validate failed", "validate timed out", "validate could not start")


def _touch(fig: Dict[str, Any], entry: Dict[str, Any]) -> Dict[str, Any]:
    """Mark ``entry`` changed: the export sends only what changed since its last success."""
    fig["rev"] += 1
    entry["rev"] = fig["rev"]
    return entry


def step_entry(fig: Dict[str, Any], step_id: str) -> Dict[str, Any]:
    """The figures of one step (created empty), marked changed. ``by`` holds, per session, that
    session's input, output, cache-read and cache-write tokens, tool calls and failures in the step."""
    found: Optional[Dict[str, Any]] = fig["steps"].get(step_id)
    if found is None:
        found = fig["steps"][step_id] = {"bars": [], "attempt": 0, "calls": 0, "failures": 0, "error": None,
                                         "files": [], "changed": 0, "tokens": [0, 0, 0, 0], "by": {},
                                         "refusals": 0, "wait": 0.0, "validation": None, "artifacts": []}
    return _touch(fig, found)


def session_entry(fig: Dict[str, Any], sid: str, t: Optional[float] = None) -> Dict[str, Any]:
    """The figures of one session (created empty), marked changed."""
    found = stored.session(fig, sid)
    if found is None:
        found = fig["sessions"][sid] = {"first": t, "last": t, "active": 0.0, "runs": [], "turns": 0,
                                        "tokens": [0, 0, 0, 0], "w": 0.0, "cost": None, "covered": 0,
                                        "calls": 0, "failures": 0, "transcript": "", "run": None}
    return _touch(fig, found)


def activity(fig: Dict[str, Any], sid: str, t: Optional[float]) -> None:
    """Count ``t`` as a moment the session was working: it extends the session's active time."""
    if t is None:
        return
    fig["first"] = t if fig["first"] is None else min(fig["first"], t)
    fig["last"] = t if fig["last"] is None else max(fig["last"], t)
    if not sid:
        return
    entry = session_entry(fig, sid, t)
    entry["first"] = t if entry["first"] is None else min(entry["first"], t)
    last = entry["last"]
    if last is None or t > last:
        if last is not None and t - last <= IDLE:
            entry["active"] += t - last
        entry["last"] = t


def step_at(fig: Dict[str, Any], t: Optional[float]) -> Optional[str]:
    """The step that was NEXT at ``t`` (the current NEXT when ``t`` is unknown)."""
    history: List[List[Any]] = fig["history"]
    found = fig["next"][0]
    if t is not None:
        found = next((step for moment, step in reversed(history) if moment <= t),
                     history[0][1] if history else found)
    return str(found) if found is not None else None


def first_incomplete(fig: Dict[str, Any], order: Sequence[str]) -> Optional[str]:
    status = fig["status"]
    return next((sid for sid in order if status.get(sid) not in COMPLETE), None)


def seed(fig: Dict[str, Any], order: Sequence[str]) -> None:
    """Before the first record, NEXT is the plan's first incomplete step, since the beginning."""
    if not fig["history"]:
        now = first_incomplete(fig, order)
        fig["next"], fig["history"] = [now, None], [[0.0, now]]


def _move_next(fig: Dict[str, Any], order: Sequence[str], t: float) -> None:
    now = first_incomplete(fig, order)
    if now != fig["next"][0]:
        fig["next"] = [now, t]
        fig["history"] = (fig["history"] + [[t, now]])[-HISTORY:]


def _run_start(fig: Dict[str, Any], sid: str) -> Optional[float]:
    entry = stored.session(fig, sid) if sid else None
    if not entry:
        return None
    runs = entry["runs"]
    start = runs[-1][0] if runs else entry["first"]
    return float(start) if start is not None else None


def _leave(fig: Dict[str, Any], bar: List[Any]) -> None:
    """An open attempt of another session: that session left the step running."""
    owner = stored.session(fig, bar[0]) or {}
    bar[2], bar[3] = max(owner.get("last") or bar[1], bar[1]), "left"


def _cut(note: str) -> str:
    """A note as the figures keep it: its first NOTE_CHARS characters, and a mark when there is more
    (the ledger keeps it whole: `baton log` shows it)."""
    return note if len(note) <= NOTE_CHARS else note[: NOTE_CHARS - 1] + "\u2026"


def _note(bar: List[Any], status: str, t: float, note: str) -> None:
    """Keep the record's note on its attempt's bar (its sixth item: [status, time, note] each)."""
    if not note:
        return
    if len(bar) < 6:
        bar.append([])
    bar[5] = (bar[5] + [[status, t, _cut(note)]])[-KEEP_NOTES:]


def _attempt(fig: Dict[str, Any], step: Dict[str, Any], step_id: str, sid: str, status: str,
             t: float, number: int, note: str) -> None:
    bars = stored.bars(fig, step_id)
    open_bar = bars[-1] if bars and bars[-1][2] is None else None
    if open_bar is not None and open_bar[0] == sid:
        if status != "running":
            open_bar[2], open_bar[3], open_bar[4] = t, status, number
        _note(open_bar, status, t, note)
        return
    if open_bar is not None:
        _leave(fig, open_bar)
    since = fig["next"][1] if fig["next"][0] == step_id else None
    previous = bars[-1][2] if bars and bars[-1][2] is not None else None  # a retry starts when the last try ended
    candidates = [x for x in (since, _run_start(fig, sid), previous) if x is not None and x <= t]
    start = t if status == "running" or not candidates else max(candidates)
    bars.append([sid, start, None if status == "running" else t, status, number])
    _note(bars[-1], status, t, note)
    if len(bars) > KEEP_BARS:
        del bars[0]


def _validation(step: Dict[str, Any], record: Mapping[str, Any], has_validate: bool) -> None:
    given = record.get("validation")
    if isinstance(given, dict):
        given = given.get("status", given.get("ok"))
    if isinstance(given, bool):
        given = "passed" if given else "failed"
    if isinstance(given, str) and given:
        step["validation"] = given[:20]
    elif record["status"] == "done" and has_validate:
        step["validation"] = "passed"
    elif record["status"] == "failed" and str(record.get("note", "")).startswith(VALIDATE_FAILED):
        step["validation"] = "failed"
    artifacts = record.get("artifacts")
    if isinstance(artifacts, list) and artifacts:
        names = [a if isinstance(a, str) else str(a.get("path") or a.get("name") or a) if isinstance(a, dict)
                 else str(a) for a in artifacts]
        step["artifacts"] = [n[:200] for n in names][:20]


def apply_record(fig: Dict[str, Any], record: Mapping[str, Any], order: Sequence[str],
                 approval: Sequence[str], validated: Sequence[str]) -> None:
    """Fold one ledger record. ``order``: the plan's step ids; ``approval``: steps needing a
    person's approval; ``validated``: steps with a ``validate`` command."""
    t = epoch(record.get("ts"))
    if t is None:
        return
    t += 0.999  # whole seconds: the record happened before the end of its second
    sid, step_id, status = str(record.get("session") or ""), str(record.get("step", "")), str(record.get("status"))
    activity(fig, sid, t)
    seed(fig, order)
    if status in STEP_STATUSES:
        step = step_entry(fig, step_id)
        number = record.get("attempt")
        step["attempt"] = number if isinstance(number, int) else step["attempt"]
        _attempt(fig, step, step_id, sid, status, t, step["attempt"], str(record.get("note") or ""))
        fig["status"][step_id] = status
        fig["progress"] = t
        if status in COMPLETE:
            step["files"] = []  # its count stays; the names only served to count each file once
        _validation(step, record, step_id in validated)
        _move_next(fig, order, t)
    elif status == "approved":
        fig["progress"] = t
        if step_id in approval and fig["next"][0] == step_id and step_id not in fig["approved"]:
            since = next(x for x in (fig["next"][1], fig["first"], t) if x is not None)
            step = step_entry(fig, step_id)
            step["wait"] += max(t - since, 0.0)
            fig["waits"] = (stored.part(fig, "waits") + [[step_id, since, t]])[-KEEP_BARS * 4:]
        fig["approved"] = sorted(set(fig["approved"]) | {step_id})
        kept = [t, step_id, sid, _cut(str(record.get("note") or "")), str(record.get("by") or ""),
                str(record.get("via") or "")[:80]]
        fig["approvals"] = ((stored.part(fig, "approvals") or []) + [kept])[-KEEP_APPROVALS:]
    elif status in ("intent", "result"):
        _effect(fig, record, t, step_id, sid, status)
    elif status == "session" and sid:
        entry = session_entry(fig, sid, t)
        cost, turns = record.get("cost_usd"), record.get("turns")
        usd = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None
        earlier = (entry.get("run") or {}).get("cost_usd")
        if earlier is not None:  # each record holds what is new since the session's earlier records
            usd = earlier + (usd or 0.0)
        entry["run"] = {"ended": str(record.get("ended") or "")[:40], "cost_usd": usd,
                        "turns": turns if isinstance(turns, int) else None}
        runs = entry["runs"]
        if runs and runs[-1][1] is None:
            runs[-1][1], runs[-1][2] = max(entry["last"] or t, runs[-1][0]), entry["run"]["ended"]


def _effect(fig: Dict[str, Any], record: Mapping[str, Any], t: float, step_id: str, sid: str, status: str) -> None:
    """Keep a ``baton once`` record: [time, key, intent or result, step, session, outcome, exit, id,
    note (the command of an intent, the evidence of a settlement), the seq it settles]."""
    code = record.get("exit")
    kept = [t, str(record.get("key") or "")[:200], status, step_id, sid, str(record.get("outcome") or ""),
            code if isinstance(code, int) and not isinstance(code, bool) else None, str(record.get("id") or "")[:120],
            _cut(str(record.get("note") or "")), record.get("settles") if isinstance(record.get("settles"), int)
            else None]
    fig["effects"] = ((stored.part(fig, "effects") or []) + [kept])[-KEEP_EFFECTS:]


def weight(tokens: Sequence[int]) -> float:
    """Tokens weighted by their relative price (input, output, cache read, cache write)."""
    return sum(n * w for n, w in zip(tokens, WEIGHTS))
