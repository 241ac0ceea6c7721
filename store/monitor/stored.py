"""How the job's figures are kept on disk: one line of JSON per part, read and written part by part.

Version 2 of the figures file. Its first line, the head, holds the job's totals and offsets, NEXT's
history, the transcripts' offsets and every step but its bars; it names the parts whose lines
follow, in this order: each session's entry, each step's bars (attempts), and the long lists that
few folds change (``closed``, ``marks``, ``alerts``, ``waits``). Reading decodes the head and the
sessions (every Stop sums the costs of all of them); a hook's fold leaves the bars and the lists as
text until it changes them (:func:`bars`, :func:`part`). Writing copies the text of each part that
did not change: one never decoded, and a session or a step's bars whose ``rev`` is not newer than
the file's (every change to an entry marks it, as the export needs too). So a Stop re-encodes what
its fold touched, not the whole figures; and one file, replaced at once, keeps each save whole.
"""

from __future__ import annotations

from store.base import jsonc as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Collection, Dict, List, Mapping, Optional

VERSION = 2
LISTS = ("closed", "marks", "alerts", "waits")  # long, and changed by few folds; ``closed`` may be absent
TIGHT = (",", ":")


class Unreadable(ValueError):
    """A part of the saved figures is not what was written there: the figures are to be rebuilt."""


class Stored(dict):  # type: ignore[type-arg]
    """Figures read from the file, with the text of their parts: the parts not decoded yet, and the
    text a save writes again for a part that did not change since (``rev``: the file's)."""

    __slots__ = ("rev", "sessions", "bars", "lists")

    def __init__(self, head: Dict[str, Any], sessions: Dict[str, str], bars: Dict[str, str],
                 lists: Dict[str, str]) -> None:
        super().__init__(head)
        self.rev: int = head["rev"]
        self.sessions, self.bars, self.lists = sessions, bars, lists


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def parse(text: str, required: Collection[str], lazy: bool = False) -> Optional[Dict[str, Any]]:
    """The figures in ``text``, or ``None`` when it is not the whole of what :func:`encode` writes or
    lacks one of the ``required`` fields (``ValueError``: not JSON). ``lazy``: the bars and the
    lists stay text until :func:`bars` or :func:`part` decodes them."""
    end = text.find("\n")
    head = json.loads(text[:end]) if end > 0 else None
    if not isinstance(head, dict) or head.get("version") != VERSION:
        return None
    parts = head.pop("parts", None)
    if not isinstance(parts, dict) or not all(_strings(parts.get(k)) for k in ("sessions", "bars", "lists")):
        return None
    sids, steps, lists = parts["sessions"], parts["bars"], parts["lists"]
    lines = text[end + 1:].split("\n")
    if (lines[-1] or len(lines) != len(sids) + len(steps) + len(lists) + 1 or not isinstance(head.get("steps"), dict)
            or list(head["steps"]) != steps or not set(lists) <= set(LISTS)
            or set(required) - set(head) - {"sessions"} - set(lists)):
        return None
    entries = json.loads("[" + ",".join(lines[:len(sids)]) + "]")
    if len(entries) != len(sids) or not all(isinstance(e, dict) for e in entries):
        return None
    head["sessions"] = dict(zip(sids, entries))
    at = len(sids) + len(steps)
    fig = Stored(head, dict(zip(sids, lines)), dict(zip(steps, lines[len(sids):at])), dict(zip(lists, lines[at:])))
    if not lazy:
        decode_all(fig)
    return fig


def _decoded(text: str, kind: type) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        raise Unreadable("a part of the saved figures is not JSON") from None
    if not isinstance(value, kind):
        raise Unreadable(f"a part of the saved figures is not a {kind.__name__}")
    return value


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
    for step_id in fig["steps"]:
        bars(fig, step_id)
    for key in LISTS:
        part(fig, key)


def encode(fig: Mapping[str, Any]) -> str:
    """The file's text for ``fig``: the head, then a line per part, each copied from the file read
    when it did not change since."""
    old = fig if isinstance(fig, Stored) else None
    head = {k: v for k, v in fig.items() if k != "sessions" and k not in LISTS}
    head["version"] = VERSION
    head["steps"] = {sid: {k: v for k, v in entry.items() if k != "bars"} for sid, entry in fig["steps"].items()}
    lists = [k for k in LISTS if k in fig or (old is not None and k in old.lists)]
    head["parts"] = {"sessions": list(fig["sessions"]), "bars": list(fig["steps"]), "lists": lists}
    lines = [json.dumps(head, separators=TIGHT)]
    for sid, entry in fig["sessions"].items():
        same = old is not None and entry.get("rev", 0) <= old.rev and sid in old.sessions
        lines.append(old.sessions[sid] if old is not None and same else json.dumps(entry, separators=TIGHT))
    for step_id, entry in fig["steps"].items():
        same = old is not None and ("bars" not in entry or entry.get("rev", 0) <= old.rev) and step_id in old.bars
        lines.append(old.bars[step_id] if old is not None and same else json.dumps(entry["bars"], separators=TIGHT))
    for key in lists:
        lines.append(json.dumps(fig[key], separators=TIGHT) if key in fig or old is None else old.lists[key])
    lines.append("")
    return "\n".join(lines)
