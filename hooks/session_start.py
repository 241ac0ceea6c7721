"""SessionStart (startup, resume, clear, compact): inject the resume protocol and the brief."""

from __future__ import annotations

from hooks.context import layout_for
from store.base.errors import BatonError
from store.base.text import one_line
from store.state import seen
from store.state.job import Job
from store.state.protocol import session_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

CAP = 3000  # far under Claude Code's 10,000-character cap on injected context
PLAN_ERROR = 240  # a plan error names a field; a 20,000-character field name must not become the context


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.plan.exists():
        return None  # no job here: say nothing
    try:
        job = Job(layout, env)
    except BatonError as exc:  # a broken plan is news the model must pass on to the person
        why = one_line(exc.message, PLAN_ERROR)
        text = f"baton: this project has a job plan, but it cannot be used: {why}. Ask the person to fix it."
    else:
        from store.checkpoint import brief_news
        from store.cli.views import gates_news
        from store.monitor.limits import job_news

        session = str(payload.get("session_id", ""))
        limits = job_news(job)
        gates = gates_news(job, env)
        text = session_context(job.brief(session, [*limits, *([gates] if gates else []), *brief_news(job)]))
        # a prompt repeats the brief only when the job changes; checkpoints are checked here, not per prompt
        seen.mark(layout, session, job.brief(session, limits))
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text[:CAP]}}
