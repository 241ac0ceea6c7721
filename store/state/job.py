"""One job as the hooks and the CLI see it: plan, up-to-date snapshot, valid approvals, NEXT for
this worker, and, with a database, whether it could be reached."""

from __future__ import annotations

import os
import time

from store.state import journal, workers
from store.state.leases import Lease, file_leases, shared_leases
from store.state.plan import Plan, Step, load_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence

    from store.state.location import Layout


class Job:
    """Loaded once per process; reads only the plan, the snapshot and a stat of the ledger."""

    def __init__(self, layout: Layout, env: Mapping[str, str], save: bool = True, fresh: bool = True) -> None:
        """``fresh=False``: with a database, a copy a few seconds old will do (the hooks' hot path)."""
        self.layout, self.env = layout, env
        self.plan: Plan = load_plan(layout.plan)
        self.worker = workers.identity(env)
        loaded = journal.read_state(layout, save=save, worker=self.worker, fresh=fresh)
        self.snap, self.torn = loaded.snapshot, loaded.torn
        self.problem: str = getattr(loaded, "problem", "")  # why the database could not be reached
        self.queued: int = getattr(loaded, "queued", 0)  # records waiting in the local queue
        self._times = (getattr(loaded, "since", 0.0), getattr(loaded, "fetched", 0.0))
        self._shared_leases = getattr(loaded, "leases", None)
        self._approved: Optional[Dict[str, bool]] = None  # checked on first use: most calls never need it
        self.next: Optional[Step] = workers.next_for(self.plan, self.snap, self.worker)

    def leases(self) -> List[Lease]:
        """Every step held by a worker, with its lease."""
        if self._shared_leases is not None:
            return shared_leases(self.plan, self.snap, self._shared_leases)
        return file_leases(self.layout, self.plan, self.snap)

    def waits(self, step_id: str) -> bool:
        """True when ``step_id`` needs a person's approval it does not have yet."""
        step = self.plan.step(step_id)
        return step is not None and step.needs_approval and not self.approved(step_id)

    def complete(self) -> bool:
        return workers.all_complete(self.plan, self.snap)

    def take_step(self) -> str:
        """In a parallel plan, claim a ready step for this worker when it holds none. Returns the
        step claimed ("" when none was), or raises :class:`BatonError` when it cannot be tried."""
        if not self.plan.parallel or self.next is not None or self.complete():
            return ""
        got = workers.claim(self.layout, self.plan, self.worker, self.waits)
        return got.step or ""

    @property
    def approvals_checked(self) -> Dict[str, bool]:
        """Each approval in the ledger mapped to whether its signature holds."""
        if self._approved is None:
            from store.state import approvals  # only steps with an approval record need the signature check

            self._approved = approvals.approved_steps(self.snap.approvals, self.env, self.key_scope)
        return self._approved

    @property
    def key_scope(self) -> str:
        """What an approval signature is bound to: the real path of this job's state folder."""
        return os.path.realpath(str(self.layout.root))

    def approved(self, step_id: str) -> bool:
        return step_id in self.snap.approvals and self.approvals_checked.get(step_id, False)

    def waiting_for_approval(self) -> bool:
        return self.next is not None and self.next.needs_approval and not self.approved(self.next.id)

    def forged(self) -> Sequence[str]:
        """Steps whose latest approval record carries no valid signature."""
        return [s for s, ok in self.approvals_checked.items() if not ok] if self.snap.approvals else []

    def brief(self, session: str = "", news: Sequence[str] = ()) -> str:
        from store.state import health
        from store.state.brief import render

        extra = [f"ALERT: an approval of {s[:40]} in the ledger is not signed by baton's prompt hook; it is ignored"
                 for s in self.forged()[:2]]
        degraded = health.degraded_news(self.layout, str((self.snap.last or {}).get("ts", "")))
        extra += [degraded] if degraded else []
        if self.problem:
            since, seen = (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t else "?" for t in self._times)
            extra.append(f"DEGRADED: the job's database cannot be reached since {since} (the state shown is as of "
                         f"{seen}); {self.queued} record(s) queued in .baton/queue.jsonl are written when it is "
                         f"back, and claims and writes wait until then: {self.problem}")
        elif self.queued:
            extra.append(f"DEGRADED: {self.queued} record(s) are still queued in .baton/queue.jsonl for the database")
        leases = self.leases() if self.plan.parallel else []
        idle = "(no step claimed by you: claims wait until the job's database is back)" if self.problem else None
        return render(self.plan, self.snap, session, self.torn, [*extra, *news], self.approved, self.worker, leases,
                      idle)
