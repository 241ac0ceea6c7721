"""The gate's refusals as a transcript shows them, for people: when, the code, the tool, what it was
asked to do (a command, a path) and the reason the model was given.

A refused call is a ``tool_use`` block in an assistant entry and, in a later user entry, an error
``tool_result`` for its id whose text ends in ``[baton:CODE]`` and begins with Claude Code's
``PreToolUse:<Tool> hook error: ``. The tool and its input come from the ``tool_use`` block when the
same read saw it, else the tool from that prefix alone.
"""

from __future__ import annotations

from store.base.text import one_line
from store.base.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple

TARGETS = {"Bash": "command", "Monitor": "command", "Write": "file_path", "Edit": "file_path", "Read": "file_path",
           "NotebookEdit": "notebook_path", "Skill": "skill", "WebFetch": "url"}
PREFIX, SUFFIX = "PreToolUse:", " hook error: "
TARGET_CHARS, REASON_CHARS = 200, 300


class Refusal(Value):
    __slots__ = ("ts", "code", "tool", "target", "reason")

    def __init__(self, ts: Optional[float], code: str, tool: str, target: str, reason: str) -> None:
        self.ts, self.code, self.tool, self.target, self.reason = ts, code, tool, target, reason


def tool_use(block: Mapping[str, Any]) -> Tuple[str, str]:
    """(tool, what it was asked to do) of a ``tool_use`` block."""
    name = str(block.get("name") or "")
    given = block.get("input")
    if not isinstance(given, dict):
        return name, ""
    field = TARGETS.get(name)
    value = given.get(field) if field else next((v for v in given.values() if isinstance(v, str)), "")
    return name, one_line(str(value or ""), TARGET_CHARS)


def remember(content: Any, used: Dict[str, Tuple[str, str]]) -> None:
    """Note the ``tool_use`` blocks of an assistant entry's ``content`` by their id."""
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            used[block["id"]] = tool_use(block)


def of_result(text: str, code: str, ts: Optional[float], tool_use_id: Any,
              used: Mapping[str, Tuple[str, str]]) -> Refusal:
    """The refusal an error ``tool_result`` with ``text`` (whose last code is ``code``) stands for."""
    tool, target = used.get(tool_use_id, ("", "")) if isinstance(tool_use_id, str) else ("", "")
    reason = text
    at = text.find(SUFFIX)
    if text.startswith(PREFIX) and at > 0:
        tool = tool or text[len(PREFIX):at]
        reason = text[at + len(SUFFIX):]
    reason = reason.rstrip()
    mark = f"[baton:{code}]"
    if reason.endswith(mark):
        reason = reason[:-len(mark)].rstrip()
    return Refusal(ts, code, tool, target, one_line(reason, REASON_CHARS))
