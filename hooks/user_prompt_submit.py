"""UserPromptSubmit: answer ``/baton:<command>`` typed by a person, with no model call.

This is the only place an approval can come from: a prompt the person typed. Other prompts pass
through untouched.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from hooks.context import env_for, layout_for
from store import commands


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    prompt = payload.get("prompt")
    parsed = commands.parse(prompt) if isinstance(prompt, str) else None
    if parsed is None:
        return None
    text = commands.run(parsed[0], parsed[1], layout_for(payload, env), env_for(payload, env))
    return {"decision": "block", "reason": text,
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "suppressOriginalPrompt": True}}
