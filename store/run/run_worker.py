"""``baton run`` on a parallel plan (steps with ``needs``): the run is one worker, its sessions work
on the step it holds.

Before each session the run claims a ready step when it holds none, in the same claim every worker
makes (``store.state.workers.claim``), and starts the session with ``BATON_WORKER`` set to the run's
worker name, so the session's hooks see that step as NEXT. While every ready step is held by
another live worker, the run waits and looks again every :data:`POLL` seconds; the job is done only
when every step is complete, whoever completed it. The worker name is ``BATON_WORKER`` when the
person set it, else ``run-<host>-<hash of the project path>``: the same across runs of one project
on one machine, so a run started again finds the step the last one held.
"""

from __future__ import annotations

import hashlib
import os

from store.state import claims, workers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

    from store.state.job import Job
    from store.state.location import Layout

WORKER = "BATON_WORKER"
POLL = 5.0  # seconds between looks for a ready step while other workers hold them all


def worker_name(layout: Layout, env: Mapping[str, str]) -> str:
    """The run's worker: ``BATON_WORKER`` when set, else one name per machine and project."""
    named = (env.get(WORKER) or "").strip()
    if named:
        return named
    try:
        host = os.uname().nodename
    except AttributeError:  # pragma: no cover - Windows has no uname (and no baton run)
        host = env.get("COMPUTERNAME", "here")
    where = hashlib.sha256(os.fsencode(str(layout.project.resolve()))).hexdigest()[:8]
    return f"run-{host}-{where}"


def nothing_ready(job: Job) -> str:
    """Why this run's worker has no step to work on: one line for the person."""
    ready = workers.ready(job.plan, job.snap)
    held = [s.id for s in ready if claims.holder(job.snap.claims, s.id) not in (None, job.worker)]
    done = sum(1 for sid in job.plan.ids if workers.is_complete(job.snap, sid))
    blocked = len(job.plan.steps) - len(ready) - done
    parts = [f"{len(held)} ready step(s) held by other workers"] if held else []
    parts += [f"{blocked} step(s) waiting for steps not done yet"] if blocked else []
    return f"nothing ready for worker {job.worker}: " + (", ".join(parts) or "no step is ready")
