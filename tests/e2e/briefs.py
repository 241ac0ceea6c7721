"""What baton put in front of the model, read from the request bodies the CLI sent; scripts per run.

`injected()` finds every SessionStart context in a logged request: the CLI (2.1.328) puts each
hook's `additionalContext` into a `"role": "system"` message as
`SessionStart hook additional context: <text>`, followed by a blank line and its own text, and
several contexts can share one text block. `Run` is a FakeAPI script for one CLI run: its turns
in order, then a plain end of turn; compaction requests get a summary without using a turn (in
this CLI version they carry the full `tools` array too, so FakeAPI counts them as main requests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .fakeapi import EXHAUSTED_TEXT, FakeAPI, text, tool_use
from .messages_api import Block

CONTEXT_PREFIX = "SessionStart hook additional context: "
BRIEF_HEADER = "baton brief (current state of this job):"
COMPACTION_MARK = "CRITICAL: Respond with TEXT ONLY"
SUMMARY = "SUMMARY-OF-THE-EARLIER-CONVERSATION"


@dataclass(frozen=True)
class Injected:
    """One SessionStart context as the model saw it, and the index of the message holding it."""

    text: str
    message: int

    def line(self, prefix: str) -> str | None:
        """The brief line starting with `prefix` (e.g. "NEXT: "), without the prefix."""
        for line in self.text.splitlines():
            if line.startswith(prefix):
                return line[len(prefix):]
        return None


def block_texts(request: dict[str, Any]) -> list[tuple[int, str]]:
    """(message index, text) for every text block of every message, in order."""
    found = []
    for index, msg in enumerate(request.get("messages", [])):
        content = msg.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        found += [(index, str(b["text"])) for b in blocks if isinstance(b, dict) and "text" in b]
    return found


PROMPT_PREFIX = "UserPromptSubmit hook additional context: "


def _context_at(block: str, start: int, prefix: str = CONTEXT_PREFIX) -> str:
    """The context starting at `start`: through the brief's last line when it has baton's header,
    else up to the first blank line."""
    header = block.find(BRIEF_HEADER, start)
    next_context = block.find(prefix, start)
    search_from = header if header >= 0 and (next_context < 0 or header < next_context) else start
    end = block.find("\n\n", search_from)
    return block[start:end if end >= 0 else len(block)]


def injected(request: dict[str, Any], prefix: str = CONTEXT_PREFIX) -> list[Injected]:
    """Every SessionStart context in `request` (with `prefix=PROMPT_PREFIX`: every context a
    UserPromptSubmit hook added), in the order the model reads them."""
    found = []
    for index, block in block_texts(request):
        for match in re.finditer(re.escape(prefix), block):
            found.append(Injected(_context_at(block, match.end(), prefix), index))
    return found


def first_message_with(request: dict[str, Any], needle: str) -> int:
    """Index of the first message with a text block containing `needle`; -1 when none has."""
    return next((index for index, block in block_texts(request) if needle in block), -1)


def is_compaction(body: dict[str, Any]) -> bool:
    """A request asking for the summary that replaces the conversation (`/compact`): its last
    user message holds the CLI's summary instructions."""
    users = [i for i, msg in enumerate(body.get("messages", [])) if msg.get("role") == "user"]
    return bool(users) and any(COMPACTION_MARK in t for i, t in block_texts(body) if i == users[-1])


def conversation(api: FakeAPI, since: int = 0) -> list[dict[str, Any]]:
    """Main-conversation requests logged from `api.log[since]` on, without compaction requests."""
    return [e.body for e in api.log[since:] if e.kind == "main" and not is_compaction(e.body)]


class Run:
    """A FakeAPI script for one CLI run: `turns` in order (a turn may be HANG), then "(script
    exhausted)"; a compaction request is answered with SUMMARY and uses no turn."""

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)
        self.served = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        if is_compaction(body):
            return [text(f"<summary>{SUMMARY}</summary>")]
        if self.served >= len(self.turns):
            return [text(EXHAUSTED_TEXT)]
        self.served += 1
        return self.turns[self.served - 1]


def bash(command: str) -> Block:
    """A Bash tool call, as the model would write it."""
    return tool_use("Bash", {"command": command, "description": command[:40]})


def write(path: Any, content: str) -> Block:
    """A Write tool call for `path` (absolute, as the model is told to write them)."""
    return tool_use("Write", {"file_path": str(path), "content": content})
