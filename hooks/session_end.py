"""SessionEnd: note how the session ended and fold its last transcript lines (Claude Code writes the
session's cost just before this hook runs), then start the export of the figures when it is on.

Claude Code gives a plugin's SessionEnd hook about 1.5 s, so nothing here waits on the network.
"""

from __future__ import annotations

from hooks.context import layout_for, session_of
from store.monitor import exporting, watch
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.plan.exists():
        return None
    watch.session_ended(Job(layout, env), session_of(payload, env), watch.transcript_of(payload.get("transcript_path")),
                        str(payload.get("reason") or "other"))
    exporting.kick(layout, env)
    return None
