"""Stop: while NEXT exists, send the agent back with the NEXT line, within baton's own budget."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from hooks.context import layout_for, session_of
from store import loop
from store.job import Job


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.plan.exists():
        return None
    transcript = payload.get("transcript_path")
    reason = loop.decide(Job(layout, env), session_of(payload, env), transcript if isinstance(transcript, str) else "")
    return {"decision": "block", "reason": reason} if reason else None
