"""Operations shared by the CLI and the prompt commands, so both behave the same way."""

from __future__ import annotations

import difflib
import json

from store.base import durable
from store.base.errors import CHECK, BatonError
from store.base.text import one_line
from store.cli import validation
from store.state import approvals, claims, journal, workers
from store.state.brief import ALL_DONE
from store.state.job import Job
from store.state.location import Layout
from store.state.plan import Plan, load_plan, parse_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Tuple

GITIGNORE = ("# derived and local files: rebuildable, not worth committing\n"
             "state.json\nlock\nhooks.lock\nevents.jsonl*\ncounters.json\nerrors.log*\ndegraded.json\ntorn.log\n.*.tmp\n"
             "workers/\nshared.json\nqueue.jsonl\nqueue.lock\nrefresh.lock\n")


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
    before = Job(layout, env) if (step.needs_approval or plan.parallel) else None
    if step.needs_approval and before is not None and not before.approved(step.id):
        raise BatonError(f"step {step.id!r} waits for a person's approval (/baton:approve {step.id}); "
                         "it cannot be recorded before that", CHECK)
    recorded = status
    if status == "done" and step.validate:
        seconds = plan.limits.get("validate_seconds", validation.DEFAULT_SECONDS)
        outcome = validation.run(step.validate, layout.project, seconds)
        if not outcome.ok:
            recorded, note = "failed", outcome.summary + (f" | {note}" if note else "")
    record = journal.append(layout, step.id, recorded, note, session=env.get("CLAUDE_CODE_SESSION_ID", ""))
    if record.get("queued"):
        message = (f"queued {step.id} {recorded}: the job's database cannot be reached, so the record is kept in "
                   f"{layout.root / 'queue.jsonl'} and written, in order, when it is back")
    else:
        message = (f"recorded {step.id} {recorded} (attempt {record['attempt']}, #{record['seq']}); "
                   f"NEXT: {next_after(layout, env, step.id, before)}")
    if recorded != status:
        return f"{message}\n{step.id} was not recorded done: {note}", CHECK
    return message, 0


def next_after(layout: Layout, env: Mapping[str, str], step_id: str, before: Any) -> str:
    """NEXT for this worker after a record: a worker whose step is now done claims a ready one."""
    job = Job(layout, env)
    if job.plan.parallel and job.next is None and not job.complete() and before is not None \
            and claims.held_by(before.snap.claims, job.worker) == step_id:
        if workers.claim(layout, job.plan, job.worker, job.waits).step:
            job = Job(layout, env)
            return next_text(job) + " (claimed for you)"
    return next_text(job)


def next_text(job: Job) -> str:
    """NEXT as ``record`` and ``claim`` print it: the step, or why there is none."""
    if job.next is not None:
        return job.next.id
    if job.complete():
        return ALL_DONE
    return workers.idle_next(job.plan, job.snap, job.worker, job.waits)


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
    key = approvals.ensure_key(env)
    ts, session = journal.now_iso(), env.get("CLAUDE_CODE_SESSION_ID", "")
    sig = approvals.sign(key, job.key_scope, step.id, ts, session)
    extra: Dict[str, Any] = {"ts": ts, "session": session, "by": "person", "via": via, "sig": sig}
    journal.append(layout, step.id, "approved", note, **extra)
    return f"approved {step.id}: the agent may now work on it. Say 'continue' (or start a session) to go on."
