"""The run: start a session, read what it did from the ledger, decide what comes next, until a stop.

Before each session the job's state decides (done, waiting for approval, a limit reached) and so
does the run's own count of sessions in a row that recorded nothing. After each session a
``session`` record goes into the ledger; an API error that is worth retrying, a killed or crashed
process, or any other error result is followed by a wait (``backoff``) and a new session, fresh by
default or resuming the failed one after an API error with ``resume``. Everything the person sees
goes through ``emit``, one event (a dict) at a time.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

from store.base.errors import BatonError
from store.base.values import Frozen
from store.run import backoff, command_line, notify, orphans, records, run_worker, session, spent, stops
from store.run.lock import RunLock
from store.run.stream import Ending, Report, refused_calls
from store.state.job import Job
from store.state.journal import now_iso
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Sequence, Tuple

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
ABNORMAL = ("api_error", "killed", "crashed", "error")
GRACE = 15.0


class Config(Frozen):
    __slots__ = ("claude", "plugin_dir", "prompt", "user_args", "user_caps", "first_wait", "max_wait",
                 "max_retries", "max_idle", "resume", "notify", "again")

    def __init__(self, claude: str, plugin_dir: str = "", prompt: str = command_line.PROMPT,
                 user_args: Sequence[str] = (), user_caps: Optional[command_line.Caps] = None, first_wait: float = 15.0,
                 max_wait: float = 600.0, max_retries: int = 50, max_idle: int = 3, resume: bool = False,
                 notify: str = "", again: str = "baton run") -> None:
        self.claude, self.plugin_dir, self.prompt = claude, plugin_dir, prompt
        self.user_args, self.user_caps = tuple(user_args), user_caps or command_line.Caps()
        self.first_wait, self.max_wait, self.max_retries = first_wait, max_wait, max_retries
        self.max_idle, self.resume, self.notify, self.again = max_idle, resume, notify, again


class Supervisor:
    def __init__(self, layout: Layout, config: Config, emit: session.Emit, env: Mapping[str, str]) -> None:
        self.layout, self.config, self.emit, self.env = layout, config, emit, env
        self.watch = session.Watch()
        self.started = time.monotonic()
        self.sessions = self.idle = self.api_errors = self.failures = self.refused = 0
        self.run_cost = 0.0
        self.resume_id = self.last_detail = self.plan_job = self.session_started = self.last_wait = ""
        self.worker = run_worker.worker_name(layout, env)

    def run(self) -> int:
        """Supervise until a stop; the exit code (see ``stops.CODES``)."""
        if os.name != "posix":
            raise BatonError("baton run needs a POSIX system (Linux or macOS)")
        claude = shutil.which(self.config.claude)
        if claude is None:
            raise BatonError(f"cannot find Claude Code ({self.config.claude!r}); install it or pass --claude PATH")
        job = self._job()
        with RunLock(self.layout.root / "run.lock"):
            orphans.become_subreaper()
            before = {sig: signal.signal(sig, self.watch.on_signal) for sig in SIGNALS}
            try:
                return self._loop(job, claude)
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    def _job(self) -> Job:
        if not self.layout.has_plan():
            raise BatonError(f"no plan at {self.layout.plan}; create one with `baton init STEP...`")
        return Job(self.layout, {**self.env, run_worker.WORKER: self.worker})

    @property
    def job_id(self) -> str:
        return self.plan_job or self.layout.project.name

    def _loop(self, job: Job, claude: str) -> int:
        self.plan_job = job.plan.job
        self.emit({"event": "start", "pid": os.getpid(), "job": self.job_id, "project": str(self.layout.project),
                   "done": _done(job), "total": len(job.plan.steps), "next": job.next.id if job.next else None})
        held = records.parked_on(self.layout, job.next.id) if job.next is not None else None
        if held is not None and not job.waiting_for_approval():  # approved since: go on at the parked call
            self.resume_id = str(held["session"])
        while True:
            if self.watch.caught():
                return self._stop(job, stops.interrupted(job, self.watch.signal_name, self.config.again))
            job = self._ready(job)
            if self.watch.caught():
                continue
            counters = spent.caught_up(job)
            held = records.parked_on(self.layout, job.next.id) if job.waiting_for_approval() and job.next else None
            verdict = stops.from_job(job, counters, self.config.claude, self.config.plugin_dir, self.config.again,
                                     held)
            if verdict is None and self.idle >= self.config.max_idle:
                verdict = stops.idle(job, self.idle, self.refused, self.last_detail, self.config.again)
            if verdict is not None:
                return self._stop(job, verdict)
            report, ending = self._session(job, counters, claude)
            try:
                after = self._job()
            except BatonError:  # the plan was broken meanwhile: keep the session's record, then say so
                records.record_session(self.layout, job.next.id if job.next else "", report.session_id,
                                       ending.ended, ending.detail, ending.cost_usd, ending.turns, ending.exit_code)
                raise
            self._record(job, after, report, ending)
            job = self._job()  # with the session's own record (its cost) in: the next decision counts it
            if self.watch.caught():
                continue
            if ending.ended == "no_plugin":
                raise BatonError(f"{ending.detail}: install it (`claude plugin install baton --marketplace "
                                 "baton-dev/baton`) or pass --plugin-dir DIR")
            stop = self._after(job, ending, report)
            if stop is not None:
                return self._stop(job, stop)

    def _ready(self, job: Job) -> Job:
        """In a parallel plan, a job in which this run's worker holds a step: claimed now when it holds
        none, waited for (polling) while every ready step is held by another live worker."""
        while job.plan.parallel and job.next is None and not job.complete() and not self.watch.caught():
            if job.take_step():
                self.last_wait = ""
                return self._job()
            self._poll(run_worker.nothing_ready(job))
            job = self._job()
        return job

    def _poll(self, why: str) -> None:
        if why != self.last_wait:  # said once, and again only when the reason changes
            self.emit({"event": "wait", "seconds": run_worker.POLL, "after": "nothing_ready", "detail": why,
                       "failures": self.failures, "retry_after": None})
            self.last_wait = why
        end = time.monotonic() + run_worker.POLL
        while not self.watch.caught() and time.monotonic() < end:
            self.emit({"event": "status", "session": self.sessions, "waiting": end - time.monotonic()})
            time.sleep(0.2)

    def _session(self, job: Job, counters: Mapping[str, Any], claude: str) -> Tuple[Report, Ending]:
        self.sessions += 1
        caps = command_line.job_caps(job.plan.limits, spent.used(counters, "turns"), stops.spent_cost(job, counters),
                                     spent.used(counters, "tokens")).tighter(self.config.user_caps)
        argv = command_line.argv(claude, caps, self.config.user_args, self.config.plugin_dir, self.resume_id,
                                 self.config.prompt)
        facts = {"next": job.next.id if job.next else None, "resume": self.resume_id or None,
                 "max_turns": caps.turns, "max_budget_usd": caps.cost_usd,
                 "task_budget": None if caps.tokens is None else max(caps.tokens, command_line.MIN_TASK_BUDGET)}
        env = command_line.environment(self.env, self.job_id)
        if job.plan.parallel:  # every session of this run is one worker: the step it claimed is its NEXT
            env[run_worker.WORKER] = self.worker
        self.session_started = now_iso()
        try:
            return session.run(self.sessions, argv, str(self.layout.project), env, self.watch, self.emit, GRACE,
                               facts)
        finally:
            orphans.sweep()

    def _record(self, before: Job, after: Job, report: Report, ending: Ending) -> None:
        recorded = stops.recorded_since(before.snap, after.snap)
        ended = ending.ended
        if ended in ("completed", "turn_cap", "budget") and after.next is not None:
            new_cost = 0.0 if ending.cost_usd is None else max(
                ending.cost_usd - records.recorded_cost(self.layout, report.session_id), 0.0)
            if after.waiting_for_approval():
                ended = "approval"
            elif stops.reached(after, spent.caught_up(after), new_cost):  # this session's record is not in yet
                ended = "limit"
        step = before.next.id if before.next else ""
        if ending.ended == "api_error":
            self._api_error(after, report, ending, step)
        parked = ending.parked and {**ending.parked, "step": after.next.id if after.next else ""}  # what it waits for
        record = records.record_session(self.layout, step, report.session_id, ended, ending.detail,
                                        ending.cost_usd, ending.turns, ending.exit_code, parked)
        cost = record.get("cost_usd")
        self.run_cost += cost if isinstance(cost, (int, float)) else 0.0
        self.idle = 0 if recorded else self.idle + (0 if ending.ended == "api_error" else 1)
        self.refused, self.last_detail = refused_calls(report.result), ending.detail
        self.emit({"event": "session_end", "session": self.sessions, "session_id": report.session_id or None,
                   "ended": ended, "detail": ending.detail, "exit_code": ending.exit_code, "cost_usd": cost,
                   "turns": ending.turns, "recorded": recorded, "next": after.next.id if after.next else None,
                   "run_cost_usd": round(self.run_cost, 10)})

    def _api_error(self, job: Job, report: Report, ending: Ending, step: str) -> None:
        """Count the turn in the job's figures, as the StopFailure hook would have: Claude Code ends a
        ``-p`` process without waiting for that hook, so it is counted here unless it got there."""
        from store.monitor import outcomes

        detail = ending.detail.split(": ", 1)[-1] if ending.api_error else ending.detail
        try:
            outcomes.turn_failed(self.layout, report.session_id, step, ending.api_error or "network", detail,
                                 job.snap.progress_seq, "baton run", since=self.session_started)
        except OSError as exc:  # the figures miss this error; the run goes on, and says so
            self.emit({"event": "warning", "message": f"could not count the API error in the figures: {exc}"})

    def _after(self, job: Job, ending: Ending, report: Report) -> Optional[stops.Stop]:
        """Decide on the failure counters after a session; wait when it ended abnormally."""
        if ending.ended == "api_error":
            self.api_errors += 1
            if not ending.transient or self.api_errors > self.config.max_retries:
                return stops.api(job, ending.detail, self.api_errors, not ending.transient, self.config.again)
            self.resume_id = report.session_id if self.config.resume else ""
        else:
            self.api_errors, self.resume_id = 0, ""
        if ending.ended not in ABNORMAL:
            self.failures = 0
            return None
        self.failures += 1
        wait = backoff.wait_seconds(self.failures, self.config.first_wait, self.config.max_wait, ending.retry_after)
        self._wait(wait, ending)
        return None

    def _wait(self, seconds: float, ending: Ending) -> None:
        self.emit({"event": "wait", "seconds": round(seconds, 3), "after": ending.ended, "detail": ending.detail,
                   "failures": self.failures, "retry_after": ending.retry_after or None})
        end = time.monotonic() + seconds
        while not self.watch.caught():
            left = end - time.monotonic()
            if left <= 0:
                break
            self.emit({"event": "status", "session": self.sessions, "waiting": left})
            time.sleep(min(0.2, left))

    def _stop(self, job: Job, stop: stops.Stop) -> int:
        if stop.note:
            step = job.next.id if job.next else (job.plan.ids[-1] if job.plan.ids else "")
            records.record_stop(self.layout, step, stop.outcome, stop.note)
        facts = {"event": "stop", "outcome": stop.outcome, "exit_code": stop.code, "message": stop.message,
                 "next": job.next.id if job.next else None, "done": _done(job), "total": len(job.plan.steps),
                 "sessions": self.sessions, "cost_usd": round(self.run_cost, 10),
                 "seconds": round(time.monotonic() - self.started, 3)}
        if self.watch.caught():
            facts["signal"] = self.watch.signal_name
        self.emit(facts)
        if self.config.notify and stop.outcome != "interrupted":
            code = notify.run(self.config.notify, self.env, {
                "outcome": stop.outcome, "exit_code": str(stop.code), "message": stop.message,
                "next": job.next.id if job.next else "", "job": self.job_id, "project": str(self.layout.project)})
            self.emit({"event": "notify", "command": self.config.notify, "exit_code": code})
        return stop.code


def _done(job: Job) -> int:
    from store.state.brief import progress

    return len(progress(job.plan, job.snap).done)
