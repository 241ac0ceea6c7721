"""Operations shared by the CLI and the prompt commands, so both behave the same way."""

from __future__ import annotations

import difflib
import json

from store.base import durable
from store.base.errors import CHECK, BatonError
from store.base.text import one_line
from store.cli import validation
from store.state import approvals, journal
from store.state.brief import ALL_DONE, progress
from store.state.job import Job
from store.state.location import Layout
from store.state.plan import Plan, load_plan, parse_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Tuple

GITIGNORE = ("# derived and local files: rebuildable, not worth committing\n"
             "state.json\nlock\nhooks.lock\nevents.jsonl*\ncounters.json\nerrors.log*\ndegraded.json\ntorn.log\n.*.tmp\n")


def suggest(step: str, plan: Plan) -> str:
    close = difflib.get_close_matches(step, plan.ids, n=1)
    listed = ", ".join(one_line(s, 40) for s in plan.ids[:20]) + (", ..." if len(plan.ids) > 20 else "")
    return (f"did you mean {close[0]!r}? " if close else "") + f"valid steps: {listed}"


def install_plan(layout: Layout, text: str, source: str, force: bool) -> Plan:
    """Validate ``text`` and write it as the job's plan (refusing to replace one unless ``force``)."""
    plan = parse_text(text, source)
    if layout.plan.exists() and not force:
        raise BatonError(f"{layout.plan} already exists; use --force to replace it")
    layout.root.mkdir(parents=True, exist_ok=True)
    ignore = layout.root / ".gitignore"
    if not ignore.exists():
        durable.atomic_write(ignore, GITIGNORE.encode())
    durable.atomic_write(layout.plan, text.encode("utf-8"))
    return plan


def seed_plan_text(steps: Any) -> str:
    return json.dumps({"steps": list(steps)}, indent=2) + "\n"


def record_step(layout: Layout, env: Mapping[str, str], step_id: str, status: str, note: str) -> Tuple[str, int]:
    """Record ``step_id`` as ``status``; return (message, exit code). Runs ``validate`` for done."""
    plan = load_plan(layout.plan)
    if status not in journal.STATUSES:
        raise BatonError(f"unknown status {status!r}; valid: {', '.join(journal.STATUSES)}")
    step = plan.step(step_id)
    if step is None:
        raise BatonError(f"unknown step {step_id!r}; {suggest(step_id, plan)}")
    if step.needs_approval and not Job(layout, env).approved(step.id):
        raise BatonError(f"step {step.id!r} waits for a person's approval (/baton:approve {step.id}); "
                         "it cannot be recorded before that", CHECK)
    recorded = status
    if status == "done" and step.validate:
        seconds = plan.limits.get("validate_seconds", validation.DEFAULT_SECONDS)
        from store.gate.enforce import validate_sandbox

        outcome = validation.run(step.validate, layout.project, seconds, validate_sandbox(Job(layout, env), step, env))
        if not outcome.ok:
            recorded, note = "failed", outcome.summary + (f" | {note}" if note else "")
    record = journal.append(layout, step.id, recorded, note, session=env.get("CLAUDE_CODE_SESSION_ID", ""))
    nxt = progress(plan, journal.read_state(layout, save=False).snapshot).next
    message = (f"recorded {step.id} {recorded} (attempt {record['attempt']}, #{record['seq']}); "
               f"NEXT: {nxt.id if nxt else ALL_DONE}")
    if recorded != status:
        return f"{message}\n{step.id} was not recorded done: {note}", CHECK
    return message, 0


def approve_step(layout: Layout, env: Mapping[str, str], step_id: str, note: str, via: str) -> str:
    """Record a person's approval, signed; only the prompt hook calls this."""
    job = Job(layout, env)
    step = job.plan.step(step_id)
    if step is None:
        raise BatonError(f"unknown step {step_id!r}; {suggest(step_id, job.plan)}")
    if not step.needs_approval:
        return f"step {step.id} does not need an approval; nothing recorded."
    if job.approved(step.id):
        return f"step {step.id} is already approved ({job.snap.approvals[step.id].get('ts')})."
    if job.next is None or job.next.id != step.id:
        now = f"NEXT is {job.next.id}" if job.next else "every step is complete"
        raise BatonError(f"step {step.id} is not waiting for an approval now ({now}); an approval counts only "
                         f"for the step that waits at that moment, so approve it when the job reaches it", CHECK)
    key = approvals.ensure_key(env)
    ts, session = journal.now_iso(), env.get("CLAUDE_CODE_SESSION_ID", "")
    sig = approvals.sign(key, job.key_scope, step.id, ts, session)
    extra: Dict[str, Any] = {"ts": ts, "session": session, "by": "person", "via": via, "sig": sig}
    journal.append(layout, step.id, "approved", note, **extra)
    return f"approved {step.id}: the agent may now work on it. Say 'continue' (or start a session) to go on."
