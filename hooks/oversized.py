"""What a hook answers when its input is larger than baton reads (``adapter.MAX_STDIN``).

Claude Code sends a Write's whole content in PreToolUse and again (with its result) in PostToolUse,
so a large file's payload is several times its size. Up to the bound it is parsed as any other; past
it nothing is parsed, and each event says what it did not do instead of passing silently: the gate
refuses the call (it cannot check what it has not read), the recorders tell the person and the model
that the outcome was not recorded, and a prompt is stopped with a message (it could have been a
``/baton:`` command). A line goes to the errors log, so the next brief says DEGRADED.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _deny(reason: str) -> Dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def answer(event: str, size: int, limit: int) -> Optional[Dict[str, Any]]:
    """The answer to an input of ``size`` bytes, over ``limit`` (``None``: print nothing)."""
    what = f"this hook's input ({mib(size)}) is more than the {mib(limit)} baton reads"
    if event == "PreToolUse":  # the adapter's deny() form; not imported, which would make an import cycle
        return _deny(f"baton refused this call: {what}, so its gate cannot check it. Write large content in "
                    "several smaller calls (e.g. append in parts), or generate it with a command. "
                    "[baton:input-too-large]")
    if event in ("PostToolUse", "PostToolUseFailure"):
        lost = "this tool call's outcome was not recorded"
        return {"systemMessage": f"baton: {what}: {lost}.",
                "hookSpecificOutput": {"hookEventName": event,
                                       "additionalContext": f"baton: {what}: {lost}; record the step's outcome "
                                                            "with baton record as usual."}}
    if event == "UserPromptSubmit":
        return {"continue": False, "stopReason": f"baton: {what}; the prompt was not sent. Shorten it, or put "
                                                 "the long part in a file and name the file."}
    return None
