"""The one runner every hook goes through: read stdin, call the event's handler, print one answer.

Failure policy, per event: the PreToolUse gate fails closed (a JSON deny with the reason); the
recorders (SessionStart, PostToolUse, PostToolUseFailure, SessionEnd) and Stop fail open but visibly
(one line in ``.baton/errors.log``, or the plugin's data folder when ``.baton/`` cannot be written,
and DEGRADED in the next brief); when what failed is a write (disk full, read-only, no permission) the
recorders also say so at once, to the person (``systemMessage``) and to the model
(``additionalContext``); a failed ``/baton:`` prompt command is stopped with a message (a bare
``/record`` that fails passes on: it may be the person's own). Nothing else is ever printed on
stdout, and the exit code is always 0, so Claude Code honours the JSON (a missing-module crash is
handled by the bootstrap in hooks.json).
"""

from __future__ import annotations

import os
import sys

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

MAX_STDIN = 64 * 1024 * 1024  # a 10 MB Write arrives twice in PostToolUse (content and result), JSON-escaped
IN_HOOK = False  # set by main(): this process is one hook call (its database time is bounded as a whole)
MODULES = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use",
    "Stop": "stop",
    "StopFailure": "stop_failure",
    "UserPromptSubmit": "user_prompt_submit",
    "SessionEnd": "session_end",
}


class PayloadError(Exception):
    """The hook's stdin is not the JSON object this event sends."""


def read_payload(raw: bytes, event: str) -> Dict[str, Any]:
    try:
        payload = jsonc.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PayloadError(f"stdin is not JSON ({type(exc).__name__})") from None
    if not isinstance(payload, dict):
        raise PayloadError("stdin is not a JSON object")
    name = payload.get("hook_event_name")
    if name != event:
        raise PayloadError(f"expected a {event} payload, got hook_event_name={str(name)[:40]!r}")
    return payload


def deny(reason: str) -> Dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


CONTEXT_EVENTS = ("SessionStart", "PostToolUse", "PostToolUseFailure")


def cannot_write(event: str, exc: OSError, lost: str) -> Dict[str, Any]:
    """The answer of a recorder that could not write: the person and the model are told now."""
    from store.base.errors import describe

    why = describe(exc)
    answer: Dict[str, Any] = {"systemMessage": f"baton cannot write its state ({why}): {lost}. Free some space or "
                                               "fix the permissions of .baton/."}
    if event in CONTEXT_EVENTS:
        answer["hookSpecificOutput"] = {
            "hookEventName": event,
            "additionalContext": f"baton cannot save its state ({why}): {lost}. Tell the person; `baton record` "
                                 "fails too until it is fixed."}
    return answer


def failure_answer(event: str, payload: Optional[Mapping[str, Any]], error: str,
                   exc: Optional[BaseException] = None) -> Optional[Dict[str, Any]]:
    if event in CONTEXT_EVENTS and isinstance(exc, OSError):
        from store.base.errors import unwritable

        if unwritable(exc):
            return cannot_write(event, exc, "this tool call's outcome was not recorded" if event != "SessionStart"
                                else "nothing this session does can be recorded")
    if event == "PreToolUse" and exc is not None:
        broken = _broken_plan(exc)
        if broken:
            return deny(broken)
    if event == "PreToolUse":
        return deny(f"baton's gate could not check this call ({error}), so it is refused to be safe. "
                    "Try a simpler call; if this keeps happening, tell the person that baton's gate is failing. "
                    "[baton:gate-error]")
    prompt = str((payload or {}).get("prompt", ""))
    if event == "UserPromptSubmit" and prompt.lstrip().startswith("/baton:"):
        return {"continue": False, "stopReason": f"baton could not run this command: {error}. Run `baton log -n 3` "
                                                 "to see whether anything was recorded."}
    return None


def _broken_plan(exc: BaseException) -> Optional[str]:
    """The gate's refusal for a broken plan (:mod:`store.gate.broken_plan`); ``None`` for any other
    failure, or when that module cannot load either (the generic refusal below still denies)."""
    try:
        from store.gate import broken_plan
    except (ImportError, SyntaxError):  # a broken install: not_installed and the bootstrap say so
        return None
    return broken_plan.reason(exc)


def not_installed(event: str, exc: BaseException) -> Optional[Dict[str, Any]]:
    """A broken install (a module missing or unreadable): like hooks/bootstrap.py, the gate denies
    only while a job is active, so a project without a job is not blocked; the rest stay silent."""
    plan = os.path.join(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd(), ".baton", "plan.json")
    if event != "PreToolUse" or not os.path.exists(plan):
        return None
    return deny(f"baton's gate is not installed correctly ({type(exc).__name__}: {exc}), so calls are refused "
                "while a job is active. Tell the person to reinstall the baton plugin. [baton:not-installed]")


def _log_failure(event: str, payload: Optional[Mapping[str, Any]], error: str) -> None:
    try:
        from store.state import health, location

        cwd = (payload or {}).get("cwd")
        layout = location.resolve(os.environ, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)
        health.report_failure(layout, event, error, os.environ.get("CLAUDE_PLUGIN_DATA", ""))
    except Exception:  # noqa: BLE001 - reporting a failure must never raise a second one
        pass


def run(event: str, raw: bytes) -> Optional[Dict[str, Any]]:
    """The answer for one hook call (``None``: print nothing). Never raises."""
    payload: Optional[Dict[str, Any]] = None
    try:
        if event not in MODULES:
            raise PayloadError(f"baton has no handler for {event!r}")
        payload = read_payload(raw, event)
        name = f"hooks.{MODULES[event]}"
        __import__(name)  # not importlib: importing it costs every hook call more than the lookup
        module = sys.modules[name]
        answer: Optional[Dict[str, Any]] = module.handle(payload, os.environ)
        return answer
    except (ImportError, SyntaxError) as exc:  # baton's own files are missing or damaged (some import lazily)
        _log_failure(event, payload, f"{type(exc).__name__}: {exc}"[:300])
        return not_installed(event, exc)
    except Exception as exc:  # noqa: BLE001 - the one broad boundary of a hook process
        error = f"{type(exc).__name__}: {exc}"[:300]
        _log_failure(event, payload, error)
        return failure_answer(event, payload, error, exc)


def _drain(stream: Any) -> int:
    """Read ``stream`` to its end in bounded chunks (Claude Code is still writing); the bytes read."""
    total = 0
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return total
        total += len(chunk)


def too_large(event: str, size: int) -> Optional[Dict[str, Any]]:
    """The answer to an input over MAX_STDIN: the gate refuses, the others say what they did not do."""
    try:
        from hooks import oversized

        _log_failure(event, None, f"hook input of {size} bytes is over the {MAX_STDIN} baton reads")
        return oversized.answer(event, size, MAX_STDIN)
    except Exception as exc:  # noqa: BLE001 - the one broad boundary of a hook process
        return failure_answer(event, None, f"{type(exc).__name__}: {exc}"[:300], exc)


def main(event: str) -> int:
    """The hook process's entry (see the bootstrap in hooks.json)."""
    import gc  # built in

    global IN_HOOK
    IN_HOOK = True  # store.backend.budget gives the whole process one deadline for the database

    # A hook process loads a few thousand long-lived objects (its modules) and makes little
    # garbage; the collector's passes over them cost a Bash gate call about 1.8 ms. Collect after
    # 100,000 net new objects instead of 700, so a long pass (a cold rebuild of a large ledger) still does.
    gc.set_threshold(100_000, 50, 100)
    raw = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:  # say what was refused; never parse a cut-off payload as if it were whole
        answer = too_large(event, len(raw) + _drain(sys.stdin.buffer))
    else:
        answer = run(event, raw)
    if answer is not None:
        sys.stdout.write(jsonc.dumps(answer))
        sys.stdout.flush()
    return 0
