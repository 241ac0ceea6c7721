"""One worker of the concurrency tests, as a process: it claims ready steps of a parallel plan and
does them until the job is complete, through baton's own code (what ``baton claim`` and ``baton
record`` run), so the tests can start many at once against one job.

Doing a step appends the worker's name to ``<artifacts>/<step>``: a step done twice shows there,
whatever the ledger says. Every record the store acknowledged (written, or queued while the
database was unreachable) is appended to ``<acks>`` as a JSON line, so a test can check that none
was lost. ``--hold`` claims one step and then sleeps until killed (a worker that dies holding it).

    python3 parallel_worker.py REPO PROJECT WORKER ARTIFACTS ACKS GO [--hold] [--records N]
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

sys.path.insert(0, sys.argv[1])

from store.backend.driver import Unreachable  # noqa: E402
from store.state import journal, location  # noqa: E402
from store.state.job import Job  # noqa: E402


def main() -> int:
    project, worker, artifacts, acks, go = sys.argv[2:7]
    hold = "--hold" in sys.argv
    env = dict(os.environ, BATON_WORKER=worker)
    layout = location.resolve(env, project)
    while not os.path.exists(go):
        time.sleep(0.005)
    if "--records" in sys.argv:
        return write_records(layout, worker, int(sys.argv[sys.argv.index("--records") + 1]), acks)
    rng = random.Random(worker)
    while True:
        try:
            job = Job(layout, env)
            if job.complete():
                return 0
            step = job.next.id if job.next is not None else job.take_step()
            if not step:
                time.sleep(0.02 + rng.random() * 0.03)
                continue
            if hold:
                print(step, flush=True)
                time.sleep(3600)
            with open(os.path.join(artifacts, step), "a") as handle:
                handle.write(worker + "\n")
            record = journal.append(layout, step, "done", f"{worker} did {step}")
            ack(acks, record)
        except Unreachable:
            time.sleep(0.1)


def write_records(layout: location.Layout, worker: str, count: int, acks: str) -> int:
    """``count`` records of this worker's own step, noted ``<worker>-<i>``."""
    for i in range(count):
        while True:
            try:
                ack(acks, journal.append(layout, worker, "running" if i % 3 else "done", f"{worker}-{i}"))
                break
            except Unreachable:
                time.sleep(0.05)
    return 0


def ack(path: str, record: dict) -> None:  # type: ignore[type-arg]
    line = json.dumps({"step": record["step"], "status": record["status"], "note": record["note"],
                       "seq": record["seq"], "queued": bool(record.get("queued"))})
    with open(path, "a") as handle:
        handle.write(line + "\n")


if __name__ == "__main__":
    sys.exit(main())
