"""Operations shared by the CLI and the prompt commands, so both behave the same way."""

from __future__ import annotations

from store.base import durable, jsonc
from store.base.errors import CHECK, USAGE, BatonError
from store.base.text import one_line
from store.base.values import Frozen
from store.plan.plan import Plan, Step, load_plan, parse_text
from store.plan.scope import scope_of
from store.state import approvals, archive, claims, journal, workers
from store.state.brief import ALL_DONE, progress
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

    from store.state.job import Job
    from store.state.snapshot import Snapshot

GITIGNORE = ("# derived and local files: rebuildable, not worth committing\n"
             "state.json\nlock\nhooks.lock\nrun.lock\nrebuild.lock\nreplay.json\nreplay.lock\nevents.jsonl*\ncounters.json\nerrors.log*\n"
             "degraded.json\ntorn.log\nquarantine/\n.*.tmp\nhashes.json\nonce/\n"
             "workers/\nshared.json\nqueue.jsonl\nqueue.lock\nrefresh.lock\n")


def suggest(step: str, plan: Plan) -> str:
    import difflib

    close = difflib.get_close_matches(step, plan.ids, n=1)
    listed = ", ".join(one_line(s, 40) for s in plan.ids[:20]) + (", ..." if len(plan.ids) > 20 else "")
    return (f"did you mean {close[0]!r}? " if close else "") + f"valid steps: {listed}"


def install_plan(layout: Layout, text: str, source: str, force: bool) -> Plan:
    """Validate ``text`` and write it as the job's plan (refusing to replace one unless ``force``)."""
    return install(layout, text, source, force)[0]


def install(layout: Layout, text: str, source: str, force: bool) -> Tuple[Plan, Optional[archive.Archived]]:
    """Validate ``text`` and make it the job's plan. Replacing a plan (``force``) starts a new job:
    the old plan and ledger are archived first (see ``store.state.archive``), never mixed in."""
    plan = parse_text(text, source)
    _refuse_effects_in_a_database(plan, source)
    old: Optional[archive.Archived] = None
    if layout.has_plan():
        if not force:
            raise BatonError(f"{layout.plan} already exists; use --force to replace it (the old job is archived)")
        try:
            job = load_plan(layout.plan).job
        except BatonError:
            job = ""  # an unreadable old plan is archived as it is
        old = archive.archive_job(layout, job)
    layout.root.mkdir(parents=True, exist_ok=True)
    ignore = layout.root / ".gitignore"
    if not ignore.exists():
        durable.atomic_write(ignore, GITIGNORE.encode())
    durable.atomic_write(layout.plan, text.encode("utf-8"))
    return plan, old


def _refuse_effects_in_a_database(plan: Plan, source: str) -> None:
    """A plan's ``effects`` run only through ``baton once``, which needs the file store (its index
    finds records by byte offset in steps.jsonl and its key lock is a file on one machine): with
    the job in a database they could never run, so such a plan is refused before it is written."""
    if plan.effects and journal.shared() is not None:
        raise BatonError(f"{source}: this plan's 'effects' ({', '.join(plan.effects[:3])}"
                         f"{', ...' if len(plan.effects) > 3 else ''}) may run only through `baton once`, which "
                         "needs the job in .baton/steps.jsonl; with the job in a database (BATON_DATABASE_URL or "
                         "BATON_STORE) they could never run. Remove 'effects', or keep this job in files (unset "
                         "BATON_DATABASE_URL and BATON_STORE); nothing was written", USAGE)


def seed_plan_text(steps: Any) -> str:
    return jsonc.dumps({"steps": list(steps)}, indent=2) + "\n"


def record_step(layout: Layout, env: Mapping[str, str], step_id: str, status: str, note: str,
                extra: Sequence[Tuple[str, Optional[str]]] = ()) -> Tuple[str, int]:
    """Record ``step_id`` as ``status``; return (message, exit code). See :func:`record`."""
    outcome = record(layout, env, step_id, status, note, extra=extra)
    return outcome.message, outcome.code


class Recorded:
    """What one ``record`` did: the ledger record, the new NEXT, the message and the exit code."""

    def __init__(self, entry: Dict[str, Any], asked: str, next_id: Optional[str], message: str, code: int,
                 complete: Optional[bool] = None, claim_error: str = "") -> None:
        self.entry, self.asked, self.next_id, self.message, self.code = entry, asked, next_id, message, code
        # in a parallel plan a worker may have no NEXT while others still work: complete is then False
        self.complete = next_id is None if complete is None else complete
        self.claim_error = claim_error  # the record stands; claiming the worker's next step failed

    def as_json(self) -> Dict[str, Any]:
        return {"recorded": self.entry, "asked": self.asked, "next": self.next_id,
                "complete": self.complete, "ok": self.code == 0, "claim_error": self.claim_error or None}


def _skip_consent(step: Step, person: str) -> None:
    """``skipped`` walks around ``validate`` and approvals: only with the plan's or a person's consent."""
    guards = [f"validate ({one_line(step.validate, 60)})"] if step.validate else []
    guards += ["an approval"] if step.needs_approval else []
    if guards and not step.skippable and not person:
        raise BatonError(f"step {step.id!r} has {' and '.join(guards)}, so skipping it needs the plan's consent "
                         "(\"skippable\": true on the step) or a person's: they type "
                         f"/baton:record {step.id} skipped REASON in Claude Code", CHECK)


def record(layout: Layout, env: Mapping[str, str], step_id: str, status: str, note: str,
           person: str = "", extra: Sequence[Tuple[str, Optional[str]]] = ()) -> Recorded:
    """Record ``step_id`` as ``status`` (any case). ``person``: how a person typed it (the prompt
    hook says so); a person may skip any step, and their record says it was theirs. A ``done`` is
    a checkpoint: its artifacts must exist (``extra``: more paths or URIs, with a known sha256),
    ``validate`` runs first, and the record keeps artifacts, input revision, git change and
    validation. A note longer than ``journal.NOTE_MAX`` is refused, never cut."""
    journal.check_note(note)
    try:
        return _record(layout, env, step_id, status, note, person, extra)
    except OSError as exc:  # the append itself says so in journal.commit; this is what came before it
        from store.base.errors import describe

        raise BatonError(f"cannot record: {describe(exc, layout.ledger)}; nothing was recorded", USAGE) from None


def _record(layout: Layout, env: Mapping[str, str], step_id: str, status: str, note: str, person: str,
            extra: Sequence[Tuple[str, Optional[str]]]) -> Recorded:
    plan = load_plan(layout.plan)
    status = status.strip().lower()
    if status not in journal.STATUSES:
        raise BatonError(f"unknown status {status!r}; valid: {', '.join(journal.STATUSES)}")
    step = plan.step(step_id)
    if step is None:
        raise BatonError(f"unknown step {step_id!r}; {suggest(step_id, plan)}")
    skip_by_person = status == "skipped" and bool(person)
    from store.state.job import Job

    before = Job(layout, env) if (step.needs_approval or plan.parallel) else None  # whose step this was
    if step.needs_approval and not skip_by_person and before is not None and not before.approved(step.id):
        raise BatonError(f"step {step.id!r} waits for a person's approval (/baton:approve {step.id}); "
                         "it cannot be recorded before that", CHECK)
    if status == "skipped":
        _skip_consent(step, person)
    if extra and status != "done":
        raise BatonError("--artifact goes with `done`: artifacts are what a finished step produced")
    snap = journal.read_state(layout, save=False).snapshot
    _refuse_rerun(step, snap, status)
    _refuse_unsettled(step, snap, status)
    from store.checkpoint import capture
    from store.checkpoint.digests import Hasher

    hasher = Hasher(layout)
    made = capture.artifacts(layout, step, extra, hasher) if status == "done" else None
    if status == "done" and any(rule.kind == "check_after_write" for rule in plan.rules):
        _refuse_failing_checks(layout, plan, step.id, env)
    recorded, validation = status, _validate(plan, step, layout, env) if status == "done" else None
    if validation is not None and validation["status"] == "failed":
        recorded, note = "failed", str(validation.pop("summary")) + (f" (note: {note})" if note else "")
    fields = capture.fields(layout, step, snap, recorded, made if recorded == "done" else None, hasher)
    hasher.save()
    if validation is not None:
        fields["validation"] = validation
    if person:
        fields.update(by="person", via=person)
    same = capture.same_change(snap, step.id, fields) if recorded == "done" else None
    if same is not None:
        nxt = progress(plan, snap, workers.identity(env)).next
        return Recorded({}, status, nxt.id if nxt else None,
                        f"{step.id} is already recorded done with this same change (patch-id "
                        f"{str(same['patch_id'])[:12]}, #{same.get('seq')}); not recorded again", 0)
    done = journal.commit(layout, step.id, recorded, note, {"session": env.get("CLAUDE_CODE_SESSION_ID", ""), **fields},
                          steps=plan.ids, retry_check=recorded == status, with_claims=plan.parallel)
    entry = done.record
    if entry.get("queued"):  # a database that cannot be reached: kept in the clone's queue
        nxt = progress(plan, done.loaded.snapshot, workers.identity(env)).next
        next_id, shown, complete, claim_error = (nxt.id if nxt else None), "", False, ""
        what = f"already queued {step.id} {recorded} (a retry adds nothing)" if done.retry else \
            f"queued {step.id} {recorded}"
        message = (f"{what}: the job's database cannot be reached, so the record is kept in "
                   f"{layout.root / 'queue.jsonl'} and written, in order, when it is back")
    else:
        after = next_after(layout, env, step.id, before, done.loaded.snapshot)
        next_id, shown, complete, claim_error = after.next_id, after.shown, after.complete, after.claim_error
        what = "already recorded" if done.retry else "recorded"
        failed = [f"{step.id} is recorded {recorded}, but no next step could be claimed for worker "
                  f"{workers.identity(env)}: {after.claim_error}; run `baton claim` once that is fixed"]
        message = "\n".join([f"{what} {step.id} {recorded} (attempt {entry.get('attempt')}, #{entry.get('seq')}"
                              + (f" at {entry.get('ts')}; a retry adds nothing" if done.retry else "")
                              + f"); NEXT: {shown}"] + [f"warning: {w}" for w in [*done.warnings]
                                                        + (failed if claim_error else [])])
    if recorded != status:
        return Recorded(entry, status, next_id, f"{message}\n{step.id} was not recorded done: {note}", CHECK,
                        complete, claim_error)
    return Recorded(entry, status, next_id, message, 0, complete, claim_error)


def _refuse_rerun(step: Step, snap: Snapshot, status: str) -> None:
    info = snap.steps.get(step.id, {})
    if step.rerun == "never" and info.get("status") == "done" and status in ("running", "done", "failed"):
        raise BatonError(f"step {step.id} has rerun: never and was recorded done at {info.get('ts')} "
                         f"(#{info.get('seq')}); it must not run twice, so it is not recorded again", CHECK)


def _refuse_unsettled(step: Step, snap: Snapshot, status: str) -> None:
    """A step is not done while one of its side effects has no result (running, or unknown)."""
    open_keys = [k for k, v in snap.once_open.items() if v.get("step") == step.id]
    if status == "done" and open_keys:
        from store.state.once_keys import settle_hint

        raise BatonError(f"step {step.id} ran a side effect whose outcome is not known yet ({open_keys[0]}"
                         + (f" and {len(open_keys) - 1} more" if len(open_keys) > 1 else "") + "): wait for it, or "
                         f"check it and settle it ({settle_hint(open_keys[0])}) before recording the step done", CHECK)


def _validate(plan: Plan, step: Step, layout: Layout, env: Mapping[str, str]) -> Dict[str, Any]:
    """The validation on a ``done`` record: passed, failed (with its summary) or none. The command
    runs tests the model wrote: in baton's sandbox where one runs (``store.gate.enforce``)."""
    if not step.validate:
        return {"status": "none"}
    from store.cli import validation
    from store.gate.enforce import validate_sandbox
    from store.state.job import Job

    seconds = plan.limits.get("validate_seconds", validation.DEFAULT_SECONDS)
    outcome = validation.run(step.validate, layout.project, seconds, validate_sandbox(Job(layout, env), step, env))
    found: Dict[str, Any] = {"status": "passed" if outcome.ok else "failed", "command": step.validate,
                             "seconds": outcome.seconds}
    if not outcome.ok:
        found["summary"] = outcome.summary
    return found


def _refuse_failing_checks(layout: Layout, plan: Plan, step_id: str, env: Mapping[str, str]) -> None:
    """check_after_write: a step is not done while a file it changed fails its check (checked again now)."""
    from store.gate.enforce import validate_sandbox
    from store.monitor.checks import still_failing
    from store.state.job import Job

    step = plan.step(step_id)
    sandbox = validate_sandbox(Job(layout, env), step, env) if step is not None else None  # the checks run code
    failing = still_failing(layout, plan.rules, step_id, env, sandbox)
    if failing:
        shown = "; ".join(f"{path} ({one_line(why, 160)})" for path, why in failing[:3])
        more = f" and {len(failing) - 3} more" if len(failing) > 3 else ""
        raise BatonError(f"step {step_id!r} cannot be recorded done: files it changed fail their check: {shown}{more}. "
                         "Fix them (their check runs again on every write), then record the step.", CHECK)


class After(Frozen):
    """NEXT for a worker after its record: the step's id, NEXT as shown, whether the job is complete,
    and why claiming a next step failed ("" when it did not): the record stands either way."""

    __slots__ = ("next_id", "shown", "complete", "claim_error")

    def __init__(self, next_id: Optional[str], shown: str, complete: bool, claim_error: str = "") -> None:
        self.next_id, self.shown, self.complete, self.claim_error = next_id, shown, complete, claim_error


def next_after(layout: Layout, env: Mapping[str, str], step_id: str, before: Optional[Job],
               after: Snapshot) -> After:
    """NEXT for this worker after a record of ``step_id``, the state being ``after``; in a parallel
    plan a worker whose step is now done claims a ready one. That claim is the next act, not part
    of the record: when it fails (the database gone, the disk full), the record is committed all
    the same and the failure is given as ``claim_error`` (a retried record would add nothing)."""
    plan = before.plan if before is not None else load_plan(layout.plan)
    if not plan.parallel:
        nxt = progress(plan, after).next
        return After((nxt.id if nxt else None), (nxt.id if nxt else ALL_DONE), nxt is None)
    from store.state.job import Job

    job, claimed = Job(layout, env), ""
    if job.next is None and not job.complete() and before is not None \
            and claims.held_by(before.snap.claims, job.worker) == step_id:
        try:
            got = workers.claim(layout, job.plan, job.worker, job.waits).step
        except BatonError as exc:
            return After(None, "(no step claimed: claiming the next ready one failed, see the warning)", False,
                         exc.message)
        if got:
            job, claimed = Job(layout, env), " (claimed for you)"
    return After((job.next.id if job.next else None), next_text(job) + claimed, job.complete())


def next_text(job: Job) -> str:
    """NEXT as ``record`` and ``claim`` print it: the step, or why there is none."""
    if job.next is not None:
        return job.next.id
    if job.complete():
        return ALL_DONE
    return workers.idle_next(job.plan, job.snap, job.worker, job.waits)


def approve_step(layout: Layout, env: Mapping[str, str], step_id: str, note: str, via: str) -> str:
    """Record a person's approval, signed; only the prompt hook calls this."""
    from store.state.job import Job

    journal.check_note(note)
    job = Job(layout, env)
    step = job.plan.step(step_id)
    if step is None:
        raise BatonError(f"unknown step {step_id!r}; {suggest(step_id, job.plan)}")
    if not step.needs_approval:
        return f"step {step.id} does not need an approval; nothing recorded."
    if job.approved(step.id):
        return f"step {step.id} is already approved ({job.snap.approvals[step.id].get('ts')})."
    if job.reading:  # NEXT is not known yet (store.state.resume): neither is what waits
        raise BatonError(f"baton has not finished reading this job's long ledger ({job.reading_note()}), so it "
                         f"cannot tell yet whether step {step.id} waits for an approval; nothing was recorded: "
                         f"send /baton:approve {step.id} again in a moment", CHECK)
    if job.next is None or job.next.id != step.id:
        now = f"NEXT is {job.next.id}" if job.next else "every step is complete"
        raise BatonError(f"step {step.id} is not waiting for an approval now ({now}); an approval counts only "
                         f"for the step that waits at that moment, so approve it when the job reaches it", CHECK)
    key = approvals.ensure_key(env)
    ts, session = journal.now_iso(), env.get("CLAUDE_CODE_SESSION_ID", "")
    approved = scope_of(job.plan, step)  # what was approved: an edit that widens it voids the approval
    sig = approvals.sign(key, job.key_scope, step.id, ts, session, approved["digest"])
    extra: Dict[str, Any] = {"ts": ts, "session": session, "by": "person", "via": via, "sig": sig, "scope": approved,
                             "kid": approvals.key_id(key)}
    done = journal.commit(layout, step.id, "approved", note, extra, steps=job.plan.ids)
    warned = "".join(f" (warning: {w})" for w in done.warnings)
    return f"approved {step.id}: the agent may now work on it. Say 'continue' (or start a session) to go on.{warned}"
