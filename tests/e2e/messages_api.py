"""The Messages API as the fake server speaks it: content blocks, answers, request reading.

`text()` and `tool_use()` build the blocks of a scripted turn; `message()` and `sse_events()`
encode an answer (one JSON message, or the SSE event stream the CLI asks for);
`all_text_of()` and `tool_results()` read what a logged request body showed the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]


def text(value: str) -> Block:
    """A text content block for a scripted turn."""
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    """A tool_use content block; the server fills in a unique id when none is given."""
    block: Block = {"type": "tool_use", "name": name, "input": input}
    if id is not None:
        block["id"] = id
    return block


# -- answers -----------------------------------------------------------------------


def stop_reason_of(blocks: list[Block]) -> str:
    """`tool_use` when the turn calls a tool, else `end_turn`."""
    return "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"


DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 10}


def message(blocks: list[Block], model: str, usage: dict[str, int] | None = None,
            id: str = "msg_fake") -> dict[str, Any]:
    """The non-streamed answer holding `blocks`, reporting `usage` (default: 10 in, 10 out). `id`:
    the message id, which Claude Code uses to join a message's blocks again when it reads a
    transcript back (on resume): give each answer its own, as the API does."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason_of(blocks),
        "stop_sequence": None,
        "usage": dict(usage or DEFAULT_USAGE),
    }


def sse_events(blocks: list[Block], model: str, usage: dict[str, int] | None = None, id: str = "msg_fake") -> bytes:
    """The streamed answer: message_start, each block's start/delta/stop, message_delta, stop.

    A tool's whole input goes in one `input_json_delta`; each text in one `text_delta`. As the real
    API does, `message_start` carries the input and cache tokens and `message_delta` the output.
    """
    usage = dict(usage or DEFAULT_USAGE)
    start = dict(message([], model, {**usage, "output_tokens": 1}, id), stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            empty = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events.append({"type": "content_block_start", "index": index, "content_block": empty})
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason_of(blocks), "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# -- reading requests --------------------------------------------------------------


@dataclass
class ToolResult:
    """A tool_result block from a request, with its content flattened to text."""

    tool_use_id: str
    text: str
    is_error: bool


def _content_text(content: Any) -> list[str]:
    """The texts of a content value: a string, or blocks (tool inputs as JSON)."""
    if isinstance(content, str):
        return [content]
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if "text" in block:
            parts.append(str(block["text"]))
        elif block.get("type") == "tool_use":
            parts.append(json.dumps(block.get("input", {})))
        elif block.get("type") == "tool_result":
            parts.extend(_content_text(block.get("content")))
    return parts


def all_text_of(request: dict[str, Any]) -> str:
    """Everything the model could read in a request: system, then every message, one text."""
    parts = _content_text(request.get("system"))
    for msg in request.get("messages", []):
        parts.extend(_content_text(msg.get("content")))
    return "\n".join(parts)


def tool_results(request: dict[str, Any]) -> list[ToolResult]:
    """The tool_result blocks of every message of a request, in order."""
    results = []
    for msg in request.get("messages", []):
        content = msg.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                flat = "\n".join(_content_text(block.get("content")))
                tool_use_id = str(block.get("tool_use_id"))
                results.append(ToolResult(tool_use_id, flat, bool(block.get("is_error"))))
    return results
