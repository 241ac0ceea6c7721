"""Transcript lines shaped as Claude Code 2.1.328 writes them (keys as seen in real transcripts):
one ``assistant`` entry per content block repeating the message's usage, ``user`` entries with
tool results, a ``cost-state`` entry when a session's process ends, and the noise around them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


def dumps(value: Any) -> str:
    """JSON as Claude Code writes it: compact."""
    return json.dumps(value, separators=(",", ":"))

SESSION = "153dc703-9e23-43ed-a736-681ca1ba86cf"


def usage(inp: int, out: int, read: int = 0, write: int = 0) -> Dict[str, Any]:
    return {"input_tokens": inp, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "output_tokens": out, "output_tokens_details": {"thinking_tokens": 0},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": write}}


def assistant(msg: str, request: str, tokens: Dict[str, Any], ts: str, blocks: Sequence[str] = ("text",),
              sidechain: bool = False, session: str = SESSION) -> List[str]:
    """The entries of one model response: one per content block, each repeating the usage."""
    lines = []
    for index, kind in enumerate(blocks):
        block = ({"type": "text", "text": "working"} if kind == "text" else
                 {"type": "tool_use", "id": f"toolu_{msg}_{index}", "name": "Bash",
                  "input": {"command": "echo hi", "description": "usage in a command"}})
        lines.append(dumps({
            "parentUuid": "p", "isSidechain": sidechain,
            "message": {"id": msg, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                        "content": [block], "stop_reason": "tool_use", "usage": tokens},
            "apiBlockIndex": index, "requestRef": request, "requestedModel": "claude-opus-5-5", "type": "assistant",
            "uuid": f"u-{msg}-{index}", "timestamp": ts, "sessionId": session}))
    return lines


def tool_result(text: str, error: bool, ts: str, tool_use_id: str = "toolu_1") -> str:
    return dumps({"parentUuid": "p", "isSidechain": False, "type": "user",
                       "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id,
                                                                "content": text, "is_error": error}]},
                       "uuid": "r", "timestamp": ts, "toolUseResult": "x", "sessionId": SESSION})


def cost_state(total: float, tokens: Dict[str, int], model: str = "claude-opus-5-5") -> str:
    usage_by_model = {model: {"inputTokens": tokens.get("input", 0), "outputTokens": tokens.get("output", 0),
                              "cacheReadInputTokens": tokens.get("read", 0),
                              "cacheCreationInputTokens": tokens.get("write", 0), "costUSD": total}}
    return dumps({"type": "cost-state", "sessionId": SESSION, "totalCostUSD": total, "totalAPIDuration": 282,
                       "totalDuration": 30146, "modelUsage": usage_by_model, "hasUnknownModelCost": False})


def noise() -> List[str]:
    """Entries that count for nothing, some mentioning "usage" in their text."""
    return [dumps({"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION}),
            dumps({"type": "attachment", "attachment": {"type": "skill_listing", "content": "x" * 5000},
                        "timestamp": "2026-11-30T10:39:01.600Z"}),
            dumps({"type": "api-request", "params": {"model": "claude-opus-5-5", "note": "usage limits"}}),
            dumps({"type": "last-prompt", "lastPrompt": "go", "sessionId": SESSION})]


def write(path: Path, lines: Sequence[str], end: str = "\n", append: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines[:-1]) + (lines[-1] + end if lines else ""))
    return path


def session_transcript(root: Path, session: str = SESSION) -> Path:
    return root / ".claude" / "projects" / "-proj" / f"{session}.jsonl"


def subagent_transcript(main: Path, agent: str, meta: Optional[bool] = True) -> Path:
    folder = main.with_suffix("") / "subagents"
    folder.mkdir(parents=True, exist_ok=True)
    if meta:
        (folder / f"agent-{agent}.meta.json").write_text('{"agentType": "general-purpose"}')
    return folder / f"agent-{agent}.jsonl"
