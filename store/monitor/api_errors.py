"""Turns that an API error ended, in the job's figures: how many, and the last one.

Claude Code retries an API error itself (``CLAUDE_CODE_MAX_RETRIES``); when its retries are spent
the turn ends and it fires ``StopFailure`` with the error's kind (``rate_limit``, ``overloaded``,
``server_error``, ``authentication_failed``...) and its message as ``last_assistant_message``.
:func:`store.monitor.outcomes.turn_failed` keeps one event line per such turn in ``events.jsonl``
(folded into the figures by :mod:`store.monitor.tally`) and the count and the last error
(:func:`entry`) in ``counters.json``, which the brief reads (:func:`news`): until the ledger gains
a step, approval or ``once`` record (session and stop records do not count), the brief says the
last turn ended on an API error, so the next model knows its last action may be unfinished.
Nothing here blocks or changes a decision.

``baton run`` notes the error of a session it saw end on one too, since Claude Code ends a ``-p``
process without waiting for its StopFailure hooks (a Python hook is cut off at exit); the counters
tell it when the hook got there first, so a turn is counted once.
"""

from __future__ import annotations

from store.base.text import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

    from store.state.snapshot import Snapshot

KIND = "api_error"


def detail_of(message: Any, details: Any = None) -> str:
    """One line for people: the message's first sentence (Claude Code's advice after it dropped),
    and the error's details when Claude Code gave any."""
    said = one_line(str(message or ""), 300).split(". ", 1)[0].rstrip(". ")
    extra = one_line(str(details or ""), 120)
    return one_line(f"{said} ({extra})" if extra else said, 200)


def entry(ts: str, session: str, step: str, error: str, detail: str, seq: int, via: str) -> Dict[str, Any]:
    """What is kept of one turn an API error ended (``seq``: the snapshot's ``progress_seq`` then)."""
    return {"ts": ts, "session": session, "step": step, "error": one_line(error, 40) or "unknown",
            "detail": one_line(detail, 200), "seq": seq, "via": via}


def already_counted(counters: Mapping[str, Any], session: str, since: str) -> bool:
    """Whether the last error counted is ``session``'s, at or after ``since`` (the hook got there first)."""
    last = last_error(counters)
    return bool(since) and last is not None and last.get("session") == session and str(last.get("ts", "")) >= since


def last_error(counters: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    last = counters.get("api_error")
    return last if isinstance(last, dict) else None


def news(counters: Mapping[str, Any], snap: Snapshot) -> List[str]:
    """The brief's API ERROR line while no progress was recorded since the last turn an API error ended."""
    last = last_error(counters)
    if last is None or last.get("seq") != snap.progress_seq:
        return []
    count = int(counters.get("api_errors", 0) or 0)
    where = f" on {one_line(str(last.get('step')), 40)}" if last.get("step") else ""
    return [f"API ERROR: the last turn{where} ended on an API error ({last.get('error')}: "
            f"{one_line(str(last.get('detail', '')), 60)}) at {last.get('ts')}, {count} in this job: its last "
            "action may be unfinished, check it before redoing it"]
