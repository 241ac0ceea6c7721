"""Folding one piece of news into the job's figures: a ledger record, a hook's event line, or what a
transcript read found. Pure functions over the figures' JSON dict (see :mod:`store.monitor.figures`).

A step's spend is what happened while it was NEXT: its attempts run from the moment it became NEXT
(or its ``running`` record, or the start of the session that worked on it) to its record, and a
model response belongs to the step that was NEXT when it was written. Ledger times have whole
seconds, so a record's moment is taken as the end of its second.
"""

from __future__ import annotations

from store.monitor.clock import epoch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

    from store.monitor.transcript import Message, Reading

# relative prices of input, output, cache-read and cache-write tokens (the same for every current
# Claude model); used only to share a reported cost among steps and to estimate unreported cost
WEIGHTS = (1.0, 5.0, 0.1, 1.25)
IDLE = 300.0  # a gap longer than this without any activity is idle time, not active time
HISTORY = 256
KEEP_BARS = 50
KEEP_FILES = 200
KEEP_ALERTS = 200
KEEP_MARKS = 1000  # times of the latest tool failures, for the report's timeline
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
    found: Optional[Dict[str, Any]] = fig["sessions"].get(sid)
    if found is None:
        found = fig["sessions"][sid] = {"first": t, "last": t, "active": 0.0, "runs": [], "turns": 0,
                                        "tokens": [0, 0, 0, 0], "w": 0.0, "cost": None, "covered": 0,
                                        "calls": 0, "failures": 0, "transcript": "", "run": None}
    return _touch(fig, found)


def _by(step: Dict[str, Any], sid: str) -> List[Any]:
    found: List[Any] = step["by"].setdefault(sid, [0, 0, 0, 0, 0, 0])
    return found


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
    entry = fig["sessions"].get(sid) if sid else None
    if not entry:
        return None
    runs = entry["runs"]
    start = runs[-1][0] if runs else entry["first"]
    return float(start) if start is not None else None


def _leave(fig: Dict[str, Any], bar: List[Any]) -> None:
    """An open attempt of another session: that session left the step running."""
    owner = fig["sessions"].get(bar[0]) or {}
    bar[2], bar[3] = max(owner.get("last") or bar[1], bar[1]), "left"


def _attempt(fig: Dict[str, Any], step: Dict[str, Any], step_id: str, sid: str, status: str,
             t: float, number: int) -> None:
    bars: List[List[Any]] = step["bars"]
    open_bar = bars[-1] if bars and bars[-1][2] is None else None
    if open_bar is not None and open_bar[0] == sid:
        if status != "running":
            open_bar[2], open_bar[3], open_bar[4] = t, status, number
        return
    if open_bar is not None:
        _leave(fig, open_bar)
    since = fig["next"][1] if fig["next"][0] == step_id else None
    previous = bars[-1][2] if bars and bars[-1][2] is not None else None  # a retry starts when the last try ended
    candidates = [x for x in (since, _run_start(fig, sid), previous) if x is not None and x <= t]
    start = t if status == "running" or not candidates else max(candidates)
    bars.append([sid, start, None if status == "running" else t, status, number])
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
        _attempt(fig, step, step_id, sid, status, t, step["attempt"])
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
            fig["waits"] = (fig["waits"] + [[step_id, since, t]])[-KEEP_BARS * 4:]
        fig["approved"] = sorted(set(fig["approved"]) | {step_id})
    elif status == "session" and sid:
        entry = session_entry(fig, sid, t)
        cost, turns = record.get("cost_usd"), record.get("turns")
        usd = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None
        entry["run"] = {"ended": str(record.get("ended") or "")[:40], "cost_usd": usd,
                        "turns": turns if isinstance(turns, int) else None}
        runs = entry["runs"]
        if runs and runs[-1][1] is None:
            runs[-1][1], runs[-1][2] = max(entry["last"] or t, runs[-1][0]), entry["run"]["ended"]


def _tool_event(fig: Dict[str, Any], event: Mapping[str, Any], t: Optional[float]) -> None:
    sid, step_id, ok = str(event.get("session") or ""), str(event.get("step") or ""), bool(event.get("ok"))
    targets = [step_entry(fig, step_id)] if step_id else []
    targets += [session_entry(fig, sid, t)] if sid else []
    fig["calls"] += 1
    for entry in targets:
        entry["calls"] += 1
    if step_id:
        _by(targets[0], sid)[4] += 1
        if not ok:
            _by(targets[0], sid)[5] += 1
    if not ok:
        fig["failures"] += 1
        if t is not None:
            fig["marks"] = (fig["marks"] + [[t, sid, step_id]])[-KEEP_MARKS:]
        error = {"ts": t, "step": step_id, "session": sid, "tool": str(event.get("tool", ""))[:40],
                 "target": str(event.get("target", ""))[:120], "error": str(event.get("error", ""))[:200]}
        fig["error"] = error
        for entry in targets:
            entry["failures"] += 1
        if step_id:
            targets[0]["error"] = error
    changed = event.get("changed")
    if step_id and isinstance(changed, list):
        step = targets[0]
        for name in changed:
            if isinstance(name, str) and name not in step["files"]:
                step["changed"] += 1
                if len(step["files"]) < KEEP_FILES:
                    step["files"].append(name)
    activity(fig, sid, t)


def _session_event(fig: Dict[str, Any], event: Mapping[str, Any], t: Optional[float]) -> None:
    sid = str(event.get("session") or "")
    if not sid or t is None:
        return
    entry = session_entry(fig, sid, t)
    runs: List[List[Any]] = entry["runs"]
    path = event.get("transcript")
    if isinstance(path, str) and path:
        entry["transcript"] = path
        fig["transcripts"].setdefault(path, [sid, 0, []])
    if event.get("event") == "start":
        if event.get("source") == "compact":
            activity(fig, sid, t)
            return  # compaction happens inside a running process: not a new run
        if runs and runs[-1][1] is None:
            runs[-1][1], runs[-1][2] = max(entry["last"] or runs[-1][0], runs[-1][0]), "lost"
        runs.append([t, None, ""])
        entry["source"] = str(event.get("source") or "")[:20]
    elif event.get("event") == "end":
        reason = str(event.get("reason") or "other")[:40]
        if runs and runs[-1][1] is None:
            runs[-1][1], runs[-1][2] = t, reason
        else:
            runs.append([entry["first"] if entry["first"] is not None else t, t, reason])
    activity(fig, sid, t)


def apply_event(fig: Dict[str, Any], event: Mapping[str, Any]) -> None:
    """Fold one line of ``events.jsonl``: a tool outcome, a session's start or end, or an alert."""
    t = epoch(event.get("ts"))
    kind = event.get("kind")
    if kind is None and "tool" in event:
        _tool_event(fig, event, t)
    elif kind == "session":
        _session_event(fig, event, t)
    elif kind == "alert":
        keep = {k: event.get(k) for k in ("ts", "alert", "key", "step", "session", "message")}
        fig["alerts"] = (fig["alerts"] + [keep])[-KEEP_ALERTS:]
        fig["alerts_total"] += 1


def weight(tokens: Sequence[int]) -> float:
    return sum(n * w for n, w in zip(tokens, WEIGHTS))


def apply_message(fig: Dict[str, Any], sid: str, message: Message, main: bool) -> None:
    """Fold one model response of a session's transcript (``main``) or of one of its subagents'."""
    entry = session_entry(fig, sid, message.ts)
    add = message.tokens
    step_id = step_at(fig, message.ts)
    targets = [fig, entry] + ([step_entry(fig, step_id)] if step_id else [])
    for target in targets:
        target["tokens"] = [a + b for a, b in zip(target["tokens"], add)]
    entry["w"] += weight(add)
    if step_id:
        mine = _by(fig["steps"][step_id], sid)
        mine[:4] = [a + b for a, b in zip(mine[:4], add)]
    if message.new and main and not message.sidechain:
        fig["turns"] += 1
        entry["turns"] += 1
    activity(fig, sid, message.ts)


def apply_refusal(fig: Dict[str, Any], ts: Optional[float], code: str) -> None:
    """A tool call the gate refused (its ``[baton:CODE]`` in the tool result)."""
    fig["refusals"][code] = fig["refusals"].get(code, 0) + 1
    step_id = step_at(fig, ts)
    if step_id:
        step_entry(fig, step_id)["refusals"] += 1


def apply_costs(fig: Dict[str, Any], sid: str, reading: Reading) -> None:
    """The session's cost as its transcript states it: the latest ``cost-state``, older per-message prices."""
    entry = session_entry(fig, sid, reading.last_ts)
    for cost in reading.costs:
        entry["cost"], entry["covered"] = cost.usd, cost.covered
    if reading.priced:
        entry["priced"] = entry.get("priced", 0.0) + reading.priced
