"""UserPromptSubmit: answer baton's commands typed by a person, with no model call; keep the model's
view of the job current.

``/baton:<command>``, and the bare ``/brief`` and ``/record`` while baton's command files are the
ones Claude Code uses, are answered here: the prompt stops at this hook (Claude Code shows
"Operation stopped by hook: " and baton's answer) and no model request is made. This is the only
place an approval can come from: a prompt the person typed. Any other prompt passes through, with
the current brief added when the job changed since this session's model last saw it.
"""

from __future__ import annotations

from hooks.context import env_for, layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

    from store.state.location import Layout

CONTEXT_CAP = 3000  # like SessionStart: far under Claude Code's 10,000-character cap


def answer(text: str) -> Dict[str, Any]:
    """Stop the prompt here and show ``text``: no model call, and the input box is cleared."""
    return {"continue": False, "stopReason": text}


def _command(typed: str, layout: Layout, env: Mapping[str, str], session: str) -> Optional[Dict[str, Any]]:
    from store.cli import prompt

    parsed, bare = prompt.parse(typed), False
    if parsed is None:
        parsed, bare = prompt.parse_bare(typed), True
        if parsed is None or not _bare_is_ours(parsed[0], layout, env):
            return None
    text = prompt.run(parsed[0], parsed[1], layout, env, bare=bare)
    if layout.has_plan() and session:
        from store.monitor.watch import command_answered

        try:
            command_answered(layout, session, parsed[0])
        except OSError:
            pass  # the answer matters more than the note: the report then shows the session as empty
    return answer(text)


def _bare_is_ours(name: str, layout: Layout, env: Mapping[str, str]) -> bool:
    import os
    from pathlib import Path

    from store.cli import command_files

    project = Path(env.get("CLAUDE_PROJECT_DIR") or layout.project)
    return command_files.answers(name, project, Path(env.get("HOME") or os.path.expanduser("~")))


def _fresh_brief(payload: Mapping[str, Any], env: Mapping[str, str], layout: Layout) -> Optional[Dict[str, Any]]:
    from store.base.errors import BatonError
    from store.state import seen
    from store.state.job import Job

    try:
        job = Job(layout, env_for(payload, env))  # the session is the worker whose NEXT a parallel plan shows
    except BatonError:
        return None  # a broken plan: SessionStart and the commands say so; a prompt must still go through
    session = session_of(payload, env)
    from store.monitor.limits import job_news

    context = seen.for_prompt(layout, session, job.brief(session, job_news(job)))
    if context is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context[:CONTEXT_CAP]}}


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        return None
    layout = layout_for(payload, env)
    head = prompt.lstrip()[:8]
    if head.startswith(("/baton:", "/brief", "/record")):
        answered = _command(prompt, layout, env_for(payload, env), session_of(payload, env))
        if answered is not None:
            return answered
    if not layout.has_plan():
        return None  # no job here: answer before importing anything more
    return _fresh_brief(payload, env, layout)
