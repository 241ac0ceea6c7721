"""PostToolUse and PostToolUseFailure: record the outcome compactly; alert the model at thresholds.

A sandboxed Bash call arrives with the rewritten command: the original is found by its
``tool_use_id`` in ``.baton/run/``, and the after-check undoes what the mounts could not stop.
"""

from __future__ import annotations

import os

from hooks.context import layout_for, session_of
from store.monitor import outcomes
from store.state import journal
from store.state.job import Job
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

PATH_FIELDS = ("file_path", "notebook_path")


def _first_line(text: Any, limit: int = 160) -> str:
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:limit]


def _target_and_changes(tool: str, tool_input: Mapping[str, Any], cwd: str, layout: Layout,
                        home: str, ok: bool) -> tuple[str, List[str]]:
    for key in PATH_FIELDS:
        raw = tool_input.get(key)
        if isinstance(raw, str) and raw:
            shown = outcomes.shown_path(os.path.join(cwd, raw), str(layout.project))
            return shown, [shown] if ok else []
    command = tool_input.get("command")
    if isinstance(command, str):
        words = " ".join(command.split())[:80]
        if not ok:
            return words, []
        from store.shell import analyse

        return words, [outcomes.shown_path(w, str(layout.project)) for w in analyse(command, cwd, home).writes][:20]
    return str(tool_input.get("description") or tool_input.get("prompt") or "")[:80], []


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    event = str(payload.get("hook_event_name"))
    layout = layout_for(payload, env)
    if not layout.plan.exists():
        return None
    job = Job(layout, env)
    tool = str(payload.get("tool_name") or "?")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else str(layout.project)
    ok = event == "PostToolUse"
    undone = ""
    if tool in ("Bash", "Write", "Edit", "NotebookEdit") and os.path.isdir(os.path.join(str(layout.root), "run")):
        from store.gate.afterrun import after_call

        original, undone = after_call(str(layout.root), payload)
        if original is not None and tool == "Bash":
            tool_input = {**(tool_input or {}), "command": original}
    if tool == "Bash" and isinstance((tool_input or {}).get("command"), str):
        from store.gate.rewrite import original_of

        unwrapped = original_of(str((tool_input or {})["command"]))  # its run record is gone: read the rewrite
        if unwrapped:
            tool_input = {**(tool_input or {}), "command": unwrapped}
    if not ok and tool == "Bash" and "bwrap:" in str(payload.get("error", "")):
        from store.gate import probe

        probe.forget(env)  # bubblewrap itself failed: probe again before the next command
    target, changed = _target_and_changes(tool, tool_input or {}, str(cwd), layout, env.get("HOME", ""), ok)
    step = job.next.id if job.next else ""
    record = {"ts": journal.now_iso(), "session": session_of(payload, env), "agent": payload.get("agent_id") or "",
              "step": step, "tool": tool, "target": target, "ok": ok,
              "error": "" if ok else _first_line(payload.get("error")), "changed": changed,
              **({"undone": undone[:300]} if undone else {})}
    alerts = outcomes.update(layout, record, job.snap.seq, step, job.plan.limits)
    alerts += [undone] if undone else []
    if not alerts:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "\n".join(alerts)[:2000]}}
