"""StopFailure: a turn ended on an API error Claude Code's own retries did not outlast. Count it in
the job's figures (``store.monitor.outcomes.turn_failed``) so that ``baton status`` and the next brief show it.

Claude Code ignores what this hook answers, and baton answers nothing: an overload must never be
made worse by a hook that blocks. In ``claude -p`` the process ends without waiting for this hook,
so ``baton run`` counts what it missed.
"""

from __future__ import annotations

from hooks.context import env_for, layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.has_plan():
        return None
    from store.monitor import api_errors, outcomes
    from store.state.job import Job

    job = Job(layout, env_for(payload, env), fresh=False)
    detail = api_errors.detail_of(payload.get("last_assistant_message"), payload.get("error_details"))
    step = job.next.id if job.next else ""
    outcomes.turn_failed(layout, session_of(payload, env), step, str(payload.get("error") or ""), detail,
                         job.snap.progress_seq, "StopFailure")
    return None
