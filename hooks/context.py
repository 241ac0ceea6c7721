"""Where a hook's job lives: ``CLAUDE_PROJECT_DIR`` first, since the payload's cwd follows ``cd``."""

from __future__ import annotations

import os

from store.state.location import Layout, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping


def layout_for(payload: Mapping[str, Any], env: Mapping[str, str]) -> Layout:
    cwd = payload.get("cwd")
    return resolve(env, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)


def session_of(payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
    sid = payload.get("session_id")
    return sid if isinstance(sid, str) else env.get("CLAUDE_CODE_SESSION_ID", "")


def env_for(payload: Mapping[str, Any], env: Mapping[str, str]) -> Dict[str, str]:
    """The environment with the payload's session id, which the core stamps on ledger records."""
    return {**env, "CLAUDE_CODE_SESSION_ID": session_of(payload, env)}
