"""The report's sessions as a person tells them apart: numbered in the order they began, named by
when they ran and how they ended ("#3 13:08:11-13:09:40 lost"), never by their ids; and which
of them to draw at all: a session that only answered ``/baton:`` commands, without a model turn
or a tool call, did no work and gets no lane or row of its own (its approval shows in the
approvals)."""

from __future__ import annotations

from store.monitor.clock import epoch, iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

# Claude Code's SessionEnd reasons, baton's own words, and baton run's endings (store.run.stream.ENDINGS)
ENDINGS = {"other": "ended", "open": "running", "lost": "lost", "clear": "cleared", "logout": "logged out",
           "prompt_input_exit": "exited", "completed": "completed", "approval": "awaits approval",
           "limit": "hit a limit", "api_error": "API error", "turn_cap": "out of turns", "budget": "out of budget",
           "killed": "killed", "crashed": "crashed", "error": "failed", "interrupted": "interrupted",
           "no_plugin": "no plugin"}
HOUR, DAY = 3600.0, 86400.0


def worked(session: Mapping[str, Any]) -> bool:
    """False for a session that only answered baton's commands without a model."""
    return not (session.get("commands") and not session.get("turns") and not session.get("calls")
                and not session["tokens"]["total"])


def drawn(data: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    return [s for s in data["sessions"] if worked(s)]


def numbers(data: Mapping[str, Any]) -> Dict[str, int]:
    """Each session's number, 1 for the first to begin: every session counts, drawn or not, and
    those merged into the earlier sessions' entry ``*`` too."""
    detail = [s for s in data["sessions"] if s["id"] != "*"]
    first = int(data.get("sessions_total") or len(detail)) - len(detail) + 1
    return {s["id"]: i for i, s in enumerate(detail, first)}


def ending(session: Mapping[str, Any]) -> str:
    how = str(session.get("ended") or "")
    return ENDINGS.get(how, how.replace("_", " "))


def precision(data: Mapping[str, Any]) -> str:
    """How times are written for this job: ``seconds`` (it spans under an hour), ``minutes`` (under
    a day), else ``dated``."""
    times = [t for s in data["sessions"] for t in (epoch(s.get("start")), epoch(s.get("end"))) if t is not None]
    spread = max(times) - min(times) if times else 0.0
    return "seconds" if spread < HOUR else "minutes" if spread < DAY else "dated"


def clock(value: Optional[str], how: str) -> str:
    t = epoch(value)
    if t is None:
        return "?"
    text = iso(t)
    return text[11:19] if how == "seconds" else text[11:16] if how == "minutes" else text[5:16].replace("T", " ")


def span_of(session: Mapping[str, Any], how: str) -> str:
    start = clock(session.get("start"), how)
    end = "now" if session.get("ended") == "open" else clock(session.get("end"), how)
    if how == "dated" and end[:5] == start[:5]:
        end = end[6:]  # the same day: its time only
    return f"{start}-{end}"


def label(session: Mapping[str, Any], number: int, how: str) -> str:
    """``#3 13:08:11-13:09:40 lost``."""
    if session["id"] == "*":
        return f"{session['ended']}"
    return f"#{number} {span_of(session, how)} {ending(session)}"


def group_label(sessions: Sequence[Mapping[str, Any]], numbers_of: Mapping[str, int], how: str) -> str:
    """A lane shared by consecutive sessions: their numbers and when the first began."""
    first, last = sessions[0], sessions[-1]
    return f"#{numbers_of.get(first['id'], 0)}-{numbers_of.get(last['id'], 0)} from {clock(first.get('start'), how)}"
