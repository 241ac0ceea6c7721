"""What a command says where there is no job: that there is none here and how to start one, with
exit 2, never a success that did not happen (``baton verify`` once answered "ok: 0 records, chain
intact" in any folder, and ``baton log`` printed nothing and exited 0)."""

from __future__ import annotations

import os

from store.base.errors import BatonError
from store.state import location

START = "start one with `baton init STEP...` (the steps in order, e.g. `baton init fetch build test`) or " \
        "`baton init --plan FILE`"


def no_job(layout: location.Layout) -> BatonError:
    other = location.job_nearby(layout)
    near = f"; {other} is another job's, outside this project" if other else ""
    return BatonError(f"{layout.plan}: no job here{near}; {START}")


def need_plan(layout: location.Layout) -> None:
    """For the commands that read the plan."""
    if not layout.has_plan():
        raise no_job(layout)


def need_job(layout: location.Layout) -> None:
    """For the commands that read the records: a plan, or records left without one (a plan
    removed by hand; the records are still the job's to verify and show)."""
    from store.state import journal

    if layout.has_plan():
        return
    if journal.shared() is None and location.stat_of(layout.file(location.LEDGER)) is not None:
        return
    if journal.shared() is not None and (os.environ.get("BATON_JOB") or "").strip():
        return  # the job is named for the database without a plan here
    raise no_job(layout)
