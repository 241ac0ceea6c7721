"""``baton claim`` and ``baton release``: a worker of a parallel plan takes a ready step, or gives
its step back. Exit 0 with a step, 1 with none; ``claim --wait`` polls until one is ready."""

from __future__ import annotations

import os

from store.base.errors import CHECK
from store.cli import views
from store.state import journal, workers
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Dict

    from store.state import location


def _worker_env(args: argparse.Namespace) -> Dict[str, str]:
    env = dict(os.environ)
    if args.worker:
        env["BATON_WORKER"] = args.worker
    return env


def cmd_claim(args: argparse.Namespace, layout: location.Layout) -> int:
    """Give this worker a ready step (or say why there is none); ``--wait`` polls until one is ready."""
    import time

    from store.cli.actions import next_text

    env = _worker_env(args)
    deadline = time.monotonic() + max(0.0, args.wait)
    while True:
        job = Job(layout, env)
        if not job.plan.parallel:
            print(f"this plan has no `needs`: its steps run in order, and NEXT is {next_text(job)} for everyone")
            return 0 if job.next is not None else CHECK
        got = (workers.Claimed(job.next.id, False) if job.next
               else workers.claim(layout, job.plan, job.worker, job.waits))
        if got.step is not None or job.complete() or time.monotonic() >= deadline:
            break
        time.sleep(min(2.0, max(0.2, deadline - time.monotonic())))
    if got.step is not None:
        job = Job(layout, env)
    text = next_text(job)
    data = {"worker": job.worker, "step": got.step, "new": got.new, "complete": job.complete(), "next": text}
    if args.json:
        print(views.to_json(data))
    elif got.step is not None:
        verb = "claimed" if got.new else "already holds"
        title = f" - {job.next.title}" if job.next is not None and job.next.title else ""
        print(f"worker {job.worker} {verb} {got.step}{title}")
    else:
        print(f"nothing claimed for worker {job.worker}: {text}")
    return 0 if got.step is not None else CHECK


def cmd_release(args: argparse.Namespace, layout: location.Layout) -> int:
    journal.check_note(" ".join(args.note))
    job = Job(layout, _worker_env(args))
    record = workers.release(layout, job.snap, job.worker, " ".join(args.note) or "given back")
    if args.json:
        print(views.to_json({"worker": job.worker, "released": record["step"] if record else None,
                              "queued": bool(record and record.get("queued"))}))
    elif record is None:
        print(f"worker {job.worker} holds no step; nothing released")
    else:
        print(f"worker {job.worker} gave back {record['step']}: another worker may claim it now")
    return CHECK if record is None else 0
