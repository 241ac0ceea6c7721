"""How the job's figures are kept on disk: one line of JSON per part, read and written part by part.

Version 3 of the figures file (version 2, without the report's lists of refusals, side effects and
approvals and the notes on a step's bars, is read as it is; baton before version 3 rebuilds from a
version 3 file rather than read notes it does not know). Its first line, the head, holds the job's
totals and offsets, the transcripts' offsets and every step but its bars; it names the parts whose
lines follow, in this order: NEXT's history (decoded at every read, since every fold asks which step
was NEXT when, and written as it was read while it holds the same), each session's digest (what
every Stop reads of every session: its cost, the values of its
:class:`store.monitor.costs.SessionCost`, and when it was last active, which compaction orders by),
each session's entry, each step's bars (attempts), and the long lists that few folds change
(``closed``, ``marks``, ``alerts``, ``waits``, and for the report ``refused``, ``effects`` and
``approvals``). Reading decodes the head and either every entry or, for a hook's fold (``lazy``),
the digests: ``fig["sessions"]`` then holds a session's digest until :func:`session` decodes its
entry, which whatever reads more of a session than its digest, or changes it, goes through; the bars
and the lists stay text until :func:`bars` and :func:`part` decode them. Writing copies the text of
each part that did not change: one never decoded, and a session or a step's bars whose ``rev`` is
not newer than the file's (every change to an entry marks it, as the export needs too). So a Stop
decodes and re-encodes what its fold touches, not the whole figures; and one file, replaced at once,
keeps each save whole.
"""

from __future__ import annotations

from store.base import jsonc
from store.monitor.costs import SAVED, SessionCost

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Collection, Dict, List, Mapping, Optional, Set

VERSION = 3
READABLE = (2, 3)  # version 2 lacks the report's lists and the notes on bars, which start empty
LISTS = ("closed", "marks", "alerts", "waits", "refused", "effects", "approvals")  # long, and changed by few folds;
# ``closed`` and the last three (added in version 3, for the report) may be absent
TIGHT = (",", ":")


class Unreadable(ValueError):
    """A part of the saved figures is not what was written there: the figures are to be rebuilt."""


class Stored(dict):  # type: ignore[type-arg]
    """Figures read from the file, with the text of their parts: the parts not decoded yet, and the
    text a save writes again for a part that did not change since (``rev``: the file's)."""

    __slots__ = ("rev", "history", "digests", "sessions", "undecoded", "bars", "lists")

    def __init__(self, head: Dict[str, Any], history: str, digests: Dict[str, str], sessions: Dict[str, str],
                 bars: Dict[str, str], lists: Dict[str, str]) -> None:
        super().__init__(head)
        self.rev: int = head["rev"]
        self.history, self.digests, self.sessions, self.bars, self.lists = history, digests, sessions, bars, lists
        self.undecoded: Set[str] = set()  # sessions whose place in ``fig["sessions"]`` holds their digest


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _objects(lines: List[str]) -> List[Dict[str, Any]]:
    """The JSON objects of ``lines``, one each; ``ValueError`` when they are not."""
    found = jsonc.loads("[" + ",".join(lines) + "]")
    if len(found) != len(lines) or not all(isinstance(item, dict) for item in found):
        raise ValueError("a session's line is not one JSON object")
    return list(found)


def parse(text: str, required: Collection[str], lazy: bool = False) -> Optional[Dict[str, Any]]:
    """The figures in ``text``, or ``None`` when it is not the whole of what :func:`encode` writes or
    lacks one of the ``required`` fields (``ValueError``: not JSON). ``lazy``: the sessions hold
    their digests, and the bars and the lists stay text, until the fold needs them."""
    end = text.find("\n")
    head = jsonc.loads(text[:end]) if end > 0 else None
    if not isinstance(head, dict) or head.get("version") not in READABLE:
        return None
    parts = head.pop("parts", None)
    if not isinstance(parts, dict) or not all(_strings(parts.get(k)) for k in ("sessions", "bars", "lists")):
        return None
    sids, steps, lists = parts["sessions"], parts["bars"], parts["lists"]
    history, *lines = text[end + 1:].split("\n")
    n, at = len(sids), 2 * len(sids) + len(steps)
    if (not lines or lines[-1] or len(lines) != at + len(lists) + 1 or not isinstance(head.get("steps"), dict)
            or list(head["steps"]) != steps or not set(lists) <= set(LISTS)
            or set(required) - set(head) - {"sessions", "history"} - set(lists)):
        return None
    head["history"] = jsonc.loads(history)
    if not isinstance(head["history"], list):
        return None
    head["sessions"] = dict(zip(sids, _objects(lines[:n] if lazy else lines[n:2 * n])))
    fig = Stored(head, history, dict(zip(sids, lines)), dict(zip(sids, lines[n:])),
                 dict(zip(steps, lines[2 * n:at])), dict(zip(lists, lines[at:])))
    if lazy:
        fig.undecoded.update(sids)
    else:
        decode_all(fig)
    return fig


def _decoded(text: str, kind: type) -> Any:
    try:
        value = jsonc.loads(text)
    except ValueError:
        raise Unreadable("a part of the saved figures is not JSON") from None
    if not isinstance(value, kind):
        raise Unreadable(f"a part of the saved figures is not a {kind.__name__}")
    return value


def session(fig: Dict[str, Any], sid: str) -> Optional[Dict[str, Any]]:
    """The entry of the session ``sid`` of ``fig`` (``None``: no such session), decoded first if
    ``fig["sessions"]`` still holds its digest."""
    if isinstance(fig, Stored) and sid in fig.undecoded:
        fig["sessions"][sid] = _decoded(fig.sessions[sid], dict)
        fig.undecoded.discard(sid)
    found: Optional[Dict[str, Any]] = fig["sessions"].get(sid)
    return found


def bars(fig: Dict[str, Any], step_id: str) -> List[List[Any]]:
    """The bars (attempts) of the step ``step_id`` of ``fig``, decoded first if they are still text."""
    step: Dict[str, Any] = fig["steps"][step_id]
    if "bars" not in step and isinstance(fig, Stored):
        step["bars"] = _decoded(fig.bars[step_id], list)
    found: List[List[Any]] = step["bars"]
    return found


def part(fig: Dict[str, Any], key: str) -> Any:
    """``fig[key]``, one of :data:`LISTS`, decoded first if it is still text; ``None`` when absent."""
    if key not in fig and isinstance(fig, Stored) and key in fig.lists:
        fig[key] = _decoded(fig.lists.pop(key), dict if key == "closed" else list)
    return fig.get(key)


def decode_all(fig: Dict[str, Any]) -> None:
    """Decode every part still text (for a reader that needs the whole figures)."""
    for sid in list(fig.undecoded) if isinstance(fig, Stored) else ():
        session(fig, sid)
    for step_id in fig["steps"]:
        bars(fig, step_id)
    for key in LISTS:
        part(fig, key)


def digest(entry: Mapping[str, Any]) -> Dict[str, Any]:
    """What a lazy read gives of a session until its entry is decoded."""
    return {"last": entry.get("last"), SAVED: SessionCost(entry).values()}


def encode(fig: Mapping[str, Any]) -> str:
    """The file's text for ``fig``: the head, then a line per part, each copied from the file read
    when it did not change since."""
    old = fig if isinstance(fig, Stored) else None
    head = {k: v for k, v in fig.items() if k not in ("sessions", "history") and k not in LISTS}
    head["version"] = VERSION
    head["steps"] = {sid: {k: v for k, v in entry.items() if k != "bars"} for sid, entry in fig["steps"].items()}
    lists = [k for k in LISTS if k in fig or (old is not None and k in old.lists)]
    head["parts"] = {"sessions": list(fig["sessions"]), "bars": list(fig["steps"]), "lists": lists}
    same = old is not None and jsonc.loads(old.history) == fig["history"]  # cheaper than encoding its times
    history = old.history if old is not None and same else jsonc.dumps(fig["history"], separators=TIGHT)
    digests, entries = [], []
    for sid, entry in fig["sessions"].items():
        if old is not None and sid in old.sessions and (sid in old.undecoded or entry.get("rev", 0) <= old.rev):
            digests.append(old.digests[sid])
            entries.append(old.sessions[sid])
        else:
            digests.append(jsonc.dumps(digest(entry), separators=TIGHT))
            entries.append(jsonc.dumps(entry, separators=TIGHT))
    lines = [jsonc.dumps(head, separators=TIGHT), history, *digests, *entries]
    for step_id, entry in fig["steps"].items():
        same = old is not None and ("bars" not in entry or entry.get("rev", 0) <= old.rev) and step_id in old.bars
        lines.append(old.bars[step_id] if old is not None and same else jsonc.dumps(entry["bars"], separators=TIGHT))
    for key in lists:
        lines.append(jsonc.dumps(fig[key], separators=TIGHT) if key in fig or old is None else old.lists[key])
    lines.append("")
    return "\n".join(lines)
