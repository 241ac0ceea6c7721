"""SessionStart (startup, resume, clear, compact): inject the resume protocol and the brief."""

from __future__ import annotations

from hooks.context import env_for, layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

    from store.state.location import Layout

CAP = 3000  # far under Claude Code's 10,000-character cap on injected context
ALERTS = 800  # alerts waiting for the model come first, and never crowd the brief out
PLAN_ERROR = 240  # a plan error names a field; a 20,000-character field name must not become the context


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    layout = layout_for(payload, env)
    if not layout.has_plan():
        return None  # no job here: say nothing, having imported nothing more
    from store.base.errors import BatonError
    from store.base.text import one_line
    from store.state import leases, seen
    from store.state.job import Job
    from store.state.protocol import session_context

    env = env_for(payload, env)
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
        news = []
        try:
            if job.take_step():  # a parallel plan: this session becomes a worker with a step of its own
                job = Job(layout, env)
        except BatonError as exc:
            news.append(f"DEGRADED: no step could be claimed for this session: {one_line(exc.message, 160)}")
        leases.renew(layout, job.snap, job.worker)
        limits = job_news(job)
        gates = gates_news(job, env)
        text = session_context(job.brief(session, [*news, *limits, *([gates] if gates else []), *brief_news(job)]))
        from store.state import health

        problem = health.write_problem(layout)
        if problem:  # the brief tells the model; the person is told too
            return {"systemMessage": f"baton cannot write its state ({problem}): nothing this session does "
                                     "can be recorded until that is fixed.",
                    "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text[:CAP]}}
        # a prompt repeats the brief only when the job changes; checkpoints are checked here, not per prompt
        seen.mark(layout, session, job.brief(session, limits))
    pending = _note_start(layout, payload, env)
    if pending:  # alerts raised after the last session could tell its model
        text = "\n".join(pending)[:ALERTS] + "\n\n" + text
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text[:CAP]}}


def _note_start(layout: Layout, payload: Mapping[str, Any], env: Mapping[str, str]) -> List[str]:
    """Record the session's start for the job's figures; a failure costs the figures, not the brief."""
    from store.monitor import watch

    try:
        return watch.session_started(layout, session_of(payload, env),
                                     watch.transcript_of(payload.get("transcript_path")),
                                     str(payload.get("source") or ""))
    except OSError as exc:
        from store.state import health

        health.report_failure(layout, "SessionStart", f"figures: {type(exc).__name__}: {exc}"[:300])
        return []
