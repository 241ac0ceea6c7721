"""UserPromptSubmit: answer ``/baton:<command>`` typed by a person, with no model call.

This is the only place an approval can come from: a prompt the person typed. Other prompts pass
through untouched.
"""

from __future__ import annotations

from hooks.context import env_for, layout_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.lstrip().startswith("/baton:"):
        return None  # an ordinary prompt: answer before importing the command machinery
    from store.cli import prompt as commands

    parsed = commands.parse(prompt)
    if parsed is None:
        return None
    text = commands.run(parsed[0], parsed[1], layout_for(payload, env), env_for(payload, env))
    return {"decision": "block", "reason": text,
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "suppressOriginalPrompt": True}}
