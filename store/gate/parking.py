"""Parked approvals: a call that waits for a person's approval is held (``defer``) rather than
refused, so an unattended session stops at that call and resumes there once a person approves.

Claude Code 2.1.328 honours a PreToolUse ``defer`` only in a non-interactive session (``-p``): the
call does not run, the turn ends with ``terminal_reason: "tool_deferred"`` and the call in the
result's ``deferred_tool_use``, and a later ``claude -p --resume <session>`` asks the hooks about
that same call again (same ``tool_use_id``) before it runs. Where it does not hold, baton refuses
the call as before ("only reading"), because Claude Code would otherwise go on to its own permission
flow, which may run the call:

- an interactive session ignores ``defer``: baton parks only where :func:`enabled` is sure the
  session is headless (``BATON_PARK_APPROVALS=1``, which ``baton run`` sets, and ``-p``/``--print``
  on the command line of the Claude Code process, ``/proc/$CLAUDE_PID/cmdline``);
- ``defer`` is for a call alone in its message: Claude Code may ignore it beside other calls, and
  on resume it ran a parked call but told the model its result was missing (seen with two calls), so
  a model could run it twice. baton parks a call only when the session's transcript shows its message
  complete with no other tool call (:func:`solo_call`);
- a subagent's call, and calls in a parallel plan, are refused as before.
"""

from __future__ import annotations

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping

    from store.state.job import Job

ENV = "BATON_PARK_APPROVALS"
HEADLESS_FLAGS = ("-p", "--print")
TAIL = 512 * 1024  # bytes of the transcript's end searched for the call's message


def _headless(env: Mapping[str, str]) -> bool:
    """Whether the Claude Code process that runs this hook was started with ``-p`` (or ``--print``)."""
    from store.sandbox.claude_settings import cli_arguments

    pid = str(env.get("CLAUDE_PID", ""))
    return pid.isdigit() and any(arg in HEADLESS_FLAGS for arg in cli_arguments(pid)[1:])


def enabled(env: Mapping[str, str], job: Job, payload: Mapping[str, Any]) -> bool:
    """Whether a call that waits for an approval is parked here (see the module's docstring)."""
    if env.get(ENV) != "1" or job.plan.parallel or payload.get("agent_id"):
        return False
    call_id, transcript = payload.get("tool_use_id"), payload.get("transcript_path")
    if not isinstance(call_id, str) or not call_id or not isinstance(transcript, str):
        return False
    return _headless(env) and solo_call(transcript, call_id)


def _entries(path: str) -> List[Dict[str, Any]]:
    """The transcript's last entries (its last :data:`TAIL` bytes, whole lines only)."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(size - TAIL, 0))
            data = handle.read(TAIL)
    except OSError:
        return []
    lines = data.split(b"\n")[1:] if size > TAIL else data.split(b"\n")
    out = []
    for line in lines:
        try:
            entry = jsonc.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(entry, dict) and entry.get("type") == "assistant" and isinstance(entry.get("message"), dict):
            out.append(entry["message"])
    return out


def _tool_ids(message: Mapping[str, Any]) -> List[str]:
    content = message.get("content")
    return [str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] \
        if isinstance(content, list) else []


def solo_call(transcript: str, call_id: str) -> bool:
    """Whether the transcript shows the message holding ``call_id`` complete (its ``stop_reason`` is
    known) with no other tool call: Claude Code writes a message's blocks, one entry each with the
    message's id, once the message has ended. Not found, or not sure: False."""
    messages = _entries(transcript)
    mine = next((m for m in reversed(messages) if call_id in _tool_ids(m)), None)
    if mine is None or not mine.get("id") or not mine.get("stop_reason"):
        return False
    calls = {tool for m in messages if m.get("id") == mine["id"] for tool in _tool_ids(m)}
    return calls == {call_id}


def park(job: Job) -> Dict[str, Any]:
    """The answer that parks a call until a person approves NEXT."""
    step = job.next.id if job.next else ""
    why = (f"baton parks this call until a person approves {step}: this session ends here and resumes at this "
           "call once they have.")
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer",
                                   "permissionDecisionReason": why}}
