"""PostToolUse and PostToolUseFailure: record the outcome compactly; alert the model at thresholds,
and the person (``systemMessage``) once per condition.

A sandboxed Bash call arrives with the rewritten command: the original is found by its
``tool_use_id`` in ``.baton/run/`` (or read from the rewrite, and from the absolute-path form a
plain ``baton`` command runs in), and the after-check undoes what the mounts could not stop.
After a Write, Edit or NotebookEdit that a ``check_after_write`` rule covers, the file's check
runs; a failure is told to the model (``additionalContext``) and recorded as a failed outcome."""

from __future__ import annotations

import os

from hooks.context import env_for, layout_for, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

    from store.monitor.checks import Outcome
    from store.state.job import Job
    from store.state.location import Layout

PATH_FIELDS = ("file_path", "notebook_path")


def _first_line(text: Any, limit: int = 160) -> str:
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:limit]


def _target_and_changes(tool: str, tool_input: Mapping[str, Any], cwd: str, layout: Layout,
                        home: str, ok: bool) -> tuple[str, List[str]]:
    from store.monitor.outcomes import shown_path

    for key in PATH_FIELDS:
        raw = tool_input.get(key)
        if isinstance(raw, str) and raw:
            shown = shown_path(os.path.join(cwd, raw), layout.project_dir)
            return shown, [shown] if ok else []
    command = tool_input.get("command")
    if isinstance(command, str):
        words = " ".join(command.split())[:80]
        if not ok:
            return words, []
        from store.shell import analyse

        return words, [shown_path(w, layout.project_dir) for w in analyse(command, cwd, home).writes][:20]
    return str(tool_input.get("description") or tool_input.get("prompt") or "")[:80], []


def _check(layout: Layout, job: Job, tool: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str],
           step: str) -> Optional[Outcome]:
    """check_after_write for a Write, Edit or NotebookEdit that succeeded; the outcome when it failed."""
    raw = next((tool_input.get(k) for k in PATH_FIELDS if isinstance(tool_input.get(k), str)), None)
    if tool not in ("Write", "Edit", "NotebookEdit") or not raw or not any(
            r.kind == "check_after_write" for r in job.plan.rules):
        return None
    from store.monitor import checks
    from store.monitor.outcomes import shown_path

    real = os.path.realpath(os.path.join(cwd, os.path.expanduser(str(raw))))
    shown = shown_path(real, layout.project_dir)
    sandbox = None
    step_now = job.plan.step(step) if step else None
    if step_now is not None and checks.check_for(job.plan.rules, real, str(layout.project), env.get("HOME", "")):
        from store.gate.enforce import validate_sandbox  # the check runs code the model may have written

        sandbox = validate_sandbox(job, step_now, env)
    outcome = checks.after_write(layout, job.plan.rules, real, shown, step, env.get("HOME", ""), sandbox)
    return outcome if outcome is not None and not outcome.ok else None


def _runs_baton_record(command: str, cwd: str, home: str) -> bool:
    if "record" not in command:
        return False
    from store.shell import analyse

    for argv in analyse(command, cwd, home).baton:
        words = [a for a in argv[1:] if not a.startswith("-")]
        words = words[1:] if os.path.basename(argv[0]).startswith("python") else words  # python3 <root>/store
        if words[:1] == ["record"]:
            return True
    from store.gate.baton_calls import named

    return named(command)  # a record the reader cannot see (a script the command writes): tell NEXT if it changed


def _next_after_record(payload: Mapping[str, Any], tool_input: Mapping[str, Any], job: Job, cwd: str,
                       env: Mapping[str, str]) -> List[str]:
    """After the model's own `baton record` (``tool_input`` as the model wrote it, not a sandbox's
    rewrite): the new NEXT (and news), only when it is news to it."""
    command = tool_input.get("command")
    if payload.get("tool_name") != "Bash" or not isinstance(command, str):
        return []
    if not _runs_baton_record(command, cwd, env.get("HOME", "")):
        return []
    from store.monitor.limits import job_news
    from store.state import seen

    session = session_of(payload, env)
    brief = job.brief(session, job_news(job))
    if payload.get("agent_id"):  # a subagent's record: tell it, but its parent has not seen this
        return [line for line in [seen.after_record(job.layout, "", brief, remember=False)] if line]
    return [line for line in [seen.after_record(job.layout, session, brief)] if line]


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    event = str(payload.get("hook_event_name"))
    layout = layout_for(payload, env)
    if not layout.has_plan():
        return None
    from store.monitor import outcomes
    from store.state import leases
    from store.state.job import Job
    from store.state.journal import now_iso

    job = Job(layout, env_for(payload, env), fresh=False)
    leases.renew(layout, job.snap, job.worker)
    tool = str(payload.get("tool_name") or "?")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else layout.project_dir
    ok = event == "PostToolUse"
    undone = ""
    shell = tool in ("Bash", "Monitor")  # a Monitor's command runs sandboxed as Bash's does
    if (shell or tool in ("Write", "Edit", "NotebookEdit")) and os.path.isdir(os.path.join(layout.state_dir, "run")):
        from store.sandbox.afterrun import after_call

        original, undone = after_call(layout.state_dir, payload)
        if original is not None and shell:
            tool_input = {**(tool_input or {}), "command": original}
    if shell and isinstance((tool_input or {}).get("command"), str):
        from store.gate.baton_calls import launched
        from store.sandbox.rewrite import original_of

        ran = str((tool_input or {})["command"])
        unwrapped = original_of(ran) or launched(ran)  # no run record (gone, or baton's own command): read it
        if unwrapped:
            tool_input = {**(tool_input or {}), "command": unwrapped}
    failure = "" if ok else str(payload.get("error", ""))
    if tool == "Bash" and ("bwrap:" in failure or "could not mount the job's /tmp" in failure):  # store/sandbox/scratch
        from store.sandbox import probe

        probe.forget(env)  # bubblewrap itself, or the job's /tmp, failed: probe again before the next command
    target, changed = _target_and_changes(tool, tool_input or {}, str(cwd), layout, env.get("HOME", ""), ok)
    step = job.next.id if job.next else ""
    error = "" if ok else _first_line(payload.get("error"))
    checked = _check(layout, job, tool, tool_input or {}, str(cwd), env, step) if ok and changed else None
    if checked is not None:
        ok, error = False, _first_line(f"check failed: {checked.output}")
    record = {"ts": now_iso(), "session": session_of(payload, env), "agent": payload.get("agent_id") or "",
              "step": step, "tool": tool, "target": target, "ok": ok, "error": error, "changed": changed,
              **({"undone": undone[:300]} if undone else {})}
    if job.plan.parallel:  # counted per worker: the step's own records, not the other workers'
        mark = int(job.snap.steps.get(step, {}).get("seq") or 0)
        observed = outcomes.observe(layout, record, mark, step, job.plan.limits, job.snap, job.worker)
    else:
        observed = outcomes.observe(layout, record, job.snap.seq, step, job.plan.limits, job.snap)
    told = list(observed.model)
    if checked is not None:
        told.insert(0, f"baton: {target} fails its check ({checked.check}):\n{checked.output}\nFix it: baton "
                       f"refuses `baton record {step or 'STEP'} done` while a file the step changed fails its check.")
    told += [undone] if undone else []
    told += _next_after_record(payload, tool_input or {}, job, str(cwd), env)
    answer: Dict[str, Any] = {}
    if told:
        answer["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": "\n".join(told)[:2000]}
    if observed.person or observed.earlier:
        from store.monitor import alerts, launch

        answer["systemMessage"] = alerts.for_person(observed.person, observed.earlier)
        launch.kick(layout, env)
    return answer or None
