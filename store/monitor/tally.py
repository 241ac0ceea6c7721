"""Folding a hook's event line or what a transcript read found into the job's figures: tool
outcomes, a session's start and end, alerts, model responses (tokens and turns), gate refusals and
a session's reported cost. Pure functions over the figures' JSON dict, beside :mod:`store.monitor.fold`.
"""

from __future__ import annotations

from store.monitor import fold, stored
from store.monitor.clock import epoch
from store.monitor.compact import track
from store.monitor.fold import KEEP_ALERTS, KEEP_FILES, KEEP_MARKS, activity, session_entry, step_at, step_entry, weight

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

    from store.monitor.refusals import Refusal
    from store.monitor.transcript import Message, Reading


def _by(step: Dict[str, Any], sid: str) -> List[Any]:
    """A step's figures from one session: input, output, cache-read and cache-write tokens, tool
    calls and failures."""
    found: List[Any] = step["by"].setdefault(sid, [0, 0, 0, 0, 0, 0])
    return found


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
            fig["marks"] = (stored.part(fig, "marks") + [[t, sid, step_id]])[-KEEP_MARKS:]
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
        track(fig, sid, path)
    if event.get("event") == "command":  # a /baton: command answered without a model (the report leaves it out)
        entry["commands"] = int(entry.get("commands") or 0) + 1
    elif event.get("event") == "start":
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


def _api_error(fig: Dict[str, Any], event: Mapping[str, Any], t: Optional[float]) -> None:
    """A turn an API error ended (see :mod:`store.monitor.api_errors`). Figures saved before this
    existed lack both keys, and stay readable: they start from none."""
    fig["api_errors"] = int(fig.get("api_errors") or 0) + 1
    fig["api_error"] = {"ts": t, "step": str(event.get("step") or "")[:200], "session": str(event.get("session") or ""),
                        "error": str(event.get("error") or "")[:40], "detail": str(event.get("detail") or "")[:200]}
    activity(fig, str(event.get("session") or ""), t)


def apply_event(fig: Dict[str, Any], event: Mapping[str, Any]) -> None:
    """Fold one line of ``events.jsonl``: a tool outcome, a session's start or end, an alert, or a
    turn an API error ended."""
    t = epoch(event.get("ts"))
    kind = event.get("kind")
    if kind is None and "tool" in event:
        _tool_event(fig, event, t)
    elif kind == "session":
        _session_event(fig, event, t)
    elif kind == "api_error":
        _api_error(fig, event, t)
    elif kind == "alert":
        keep = {k: event.get(k) for k in ("ts", "alert", "key", "step", "session", "message")}
        fig["alerts"] = (stored.part(fig, "alerts") + [keep])[-KEEP_ALERTS:]
        fig["alerts_total"] += 1


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


def apply_refusal(fig: Dict[str, Any], ts: Optional[float], sid: str, refusal: Refusal) -> None:
    """A tool call the gate refused (its ``[baton:CODE]`` in the tool result): counted, and kept
    among the latest :data:`KEEP_REFUSED` with what was refused, for the report."""
    code = refusal.code
    fig["refusals"][code] = fig["refusals"].get(code, 0) + 1
    step_id = step_at(fig, ts)
    if step_id:
        step_entry(fig, step_id)["refusals"] += 1
    kept = [ts, sid, step_id or "", code, refusal.tool, refusal.target, refusal.reason]
    fig["refused"] = ((stored.part(fig, "refused") or []) + [kept])[-fold.KEEP_REFUSED:]


def apply_costs(fig: Dict[str, Any], sid: str, reading: Reading) -> None:
    """The session's cost as its transcript states it: the latest ``cost-state``, older per-message prices."""
    entry = session_entry(fig, sid, reading.last_ts)
    for cost in reading.costs:
        entry["cost"], entry["covered"] = cost.usd, cost.covered
    if reading.priced:
        entry["priced"] = entry.get("priced", 0.0) + reading.priced
