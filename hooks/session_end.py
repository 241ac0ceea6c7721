"""SessionEnd: note how the session ended, then leave the rest to a detached process: folding the
session's last transcript lines (Claude Code writes its cost just before this hook runs), raising
the alerts that now hold, and the export of the figures when it is on.

Claude Code gives a plugin's SessionEnd hook about 1.5 s, so the hook itself only appends a line.
"""

from __future__ import annotations

from hooks.context import layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.has_plan():
        return None
    from store.monitor import launch, watch

    watch.session_ended(layout, session_of(payload, env), watch.transcript_of(payload.get("transcript_path")),
                        str(payload.get("reason") or "other"))
    launch.detach(layout, env, "settle")
    return None
