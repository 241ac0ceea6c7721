"""One job as the hooks and the CLI see it: plan, up-to-date snapshot, valid approvals, NEXT for
this worker, and, with a database, whether it could be reached."""

from __future__ import annotations

import os
import time

from store.plan.plan import Plan, Step, load_plan
from store.state import journal, workers
from store.state.leases import Lease, file_leases, shared_leases
from store.state.location import PLAN

PARK_APPROVALS = "BATON_PARK_APPROVALS"  # store.gate.parking.ENV: set by baton run (a test keeps them equal)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence

    from store.state.location import Layout


class Job:
    """Loaded once per process; reads only the plan, the snapshot and a stat of the ledger. A ledger
    far ahead of its snapshot (a fresh clone) is read from its end for the plan's steps (``partial``)."""

    def __init__(self, layout: Layout, env: Mapping[str, str], save: bool = True, quick: bool = True,
                 fresh: bool = True) -> None:
        """``fresh=False``: with a database, a copy a few seconds old will do (the hooks' hot path)."""
        self.layout, self.env = layout, env
        self.plan: Plan = load_plan(layout.file(PLAN))
        self.worker = workers.identity(env)
        # A quick read is exact for each step's latest record; a parallel plan's also reads every
        # claim, release and end (store.state.coldclaims), or the whole ledger when that is not exact.
        steps = self.plan.ids if quick else None
        loaded = journal.read_state(layout, save=save, steps=steps,
                                    approvals=[s.id for s in self.plan.steps if s.needs_approval],
                                    worker=self.worker, fresh=fresh, with_claims=self.plan.parallel)
        self.snap, self.torn = loaded.snapshot, loaded.torn
        self.partial, self.unresolved = loaded.partial, loaded.unresolved
        # a hook's replay of a long ledger ran out of time (store.state.resume): NEXT is not known yet
        self.reading = loaded.reading
        self.problem: str = getattr(loaded, "problem", "")  # why the database could not be reached
        self.queued: int = getattr(loaded, "queued", 0)  # records waiting in the local queue
        self._times = (getattr(loaded, "since", 0.0), getattr(loaded, "fetched", 0.0))
        self.down_since, self.as_of = self._times  # a database's job: unreachable since; the copy shown read at
        self._shared_leases = getattr(loaded, "leases", None)
        self._approvals: Optional[Dict[str, str]] = None  # checked on first use: most calls never need it
        self.key_problem = ""
        self.next: Optional[Step] = None if self.reading else workers.next_for(self.plan, self.snap, self.worker)

    def reading_note(self) -> str:
        """How far the replay of the ledger got, while it is not finished ("" once it is)."""
        if not self.reading:
            return ""
        done, total, unsaved = self.reading
        places = 1 if total < 100e6 else 0
        note = f"reading the ledger: {done / 1e6:,.{places}f} of {total / 1e6:,.{places}f} MB"
        return note + (f"; this progress is not kept ({unsaved})" if unsaved else "")

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
        if not self.plan.parallel or self.next is not None or self.reading or self.complete():
            return ""
        got = workers.claim(self.layout, self.plan, self.worker, self.waits)
        return got.step or ""

    @property
    def approval_verdicts(self) -> Dict[str, str]:
        """Each approval in the ledger mapped to valid, other-key, forged or unchecked (no usable key)."""
        if self._approvals is None:
            from store.state import approvals  # only steps with an approval record need the signature check

            self._approvals, self.key_problem = approvals.check(self.snap.approvals, self.env, self.key_scope)
        return self._approvals

    @property
    def approvals_checked(self) -> Dict[str, bool]:
        """Each approval in the ledger mapped to whether its signature holds."""
        return {step: verdict == "valid" for step, verdict in self.approval_verdicts.items()}

    @property
    def key_scope(self) -> str:
        """What an approval signature is bound to: the real path of this job's state folder."""
        return os.path.realpath(self.layout.state_dir)

    def approved(self, step_id: str) -> bool:
        """A signed approval given while the step was waiting (every step it waits for complete, and
        recorded before the approval: an approval given ahead of time counts for nothing), for a
        plan that does not now let the step do more than was approved. A step waits for every step
        before it, or in a parallel plan for its ``needs``."""
        entry = self.snap.approvals.get(step_id)
        if entry is None or self.approval_verdicts.get(step_id) != "valid" or self.approval_widened(step_id):
            return False
        seq = entry.get("seq")
        index = next((i for i, step in enumerate(self.plan.steps) if step.id == step_id), None)
        if index is None or not isinstance(seq, int):
            return False
        before = self.plan.needs_of(index) if self.plan.parallel else self.plan.ids[:index]
        for sid in before:
            info = self.snap.steps.get(sid, {})
            if info.get("status") not in ("done", "skipped") or not isinstance(info.get("seq"), int) or \
                    info["seq"] > seq:
                return False
        return True

    def approval_widened(self, step_id: str) -> Sequence[str]:
        """Why the step's approval no longer counts: the plan now lets it do more (empty: it holds)."""
        entry, step = self.snap.approvals.get(step_id), self.plan.step(step_id)
        if not entry or step is None or not isinstance(entry.get("scope"), dict):
            return []
        from store.plan.scope import scope_of, widened

        return widened(entry["scope"], scope_of(self.plan, step))

    def waiting_for_approval(self) -> bool:
        return self.next is not None and self.next.needs_approval and not self.approved(self.next.id)

    def forged(self) -> Sequence[str]:
        """Steps whose latest approval record carries no valid signature by the current key."""
        return [s for s, v in self.approval_verdicts.items() if v == "forged"] if self.snap.approvals else []

    def approval_news(self) -> List[str]:
        verdicts = self.approval_verdicts if self.snap.approvals else {}
        news = [f"ALERT: an approval of {s[:40]} in the ledger is not signed by baton's prompt hook; it is ignored"
                for s in self.forged()[:2]]
        news += [f"KEY: the approval of {s[:40]} was signed with another approval key, not the one now in "
                 f"{self._key_path()}; it counts once that key is restored, or after a person approves again"
                 for s, v in verdicts.items() if v == "other-key"][:2]
        if self.key_problem and verdicts:
            listed = ", ".join(s[:30] for s in list(verdicts)[:2]) + (", ..." if len(verdicts) > 2 else "")
            news.append(f"KEY: approval key {self._key_path()} is {self.key_problem}: approvals ({listed}) cannot "
                        "be checked and count as not given; restore it from a backup (mode 0600) or approve again")
        return news

    def _key_path(self) -> str:
        from store.state import approvals

        return approvals.key_path(self.env)

    def store_news(self) -> List[str]:
        from store.state import health

        news = []
        if self.unresolved:
            listed = ", ".join(s[:40] for s in self.unresolved[:3]) + (", ..." if len(self.unresolved) > 3 else "")
            news.append(f"STORE: baton has not finished reading this job's long ledger: {len(self.unresolved)} "
                        f"step(s) ({listed}) may have records it has not reached; run `baton brief` again in a "
                        "minute before trusting DONE")
        if self.snap.problems and self.last_line_bad():
            news.append("STORE: the ledger's last line is not a valid record, so no step can be recorded; a person "
                        "runs `baton repair` to move it aside (kept byte for byte in .baton/quarantine/)")
        problem = health.write_problem(self.layout)
        if problem:
            news.append(f"STORE: baton cannot write its state ({problem}): records and tool outcomes are not "
                        "saved until that is fixed; tell the person")
        return news

    def last_line_bad(self) -> bool:
        from store.ledger.ledger import LedgerError, read_tail

        try:
            read_tail(self.layout.ledger)
        except LedgerError:
            return True
        except OSError:
            pass
        return False

    def brief(self, session: str = "", news: Sequence[str] = ()) -> str:
        from store.state import health
        from store.state.brief import render

        extra = self._once_news() + self.approval_news() + self.store_news()
        nxt = self.next
        why = self.approval_widened(nxt.id) if nxt is not None and nxt.needs_approval else []
        if nxt is not None and why and self.approvals_checked.get(nxt.id):
            extra.append(f"APPROVAL: the approval of {nxt.id[:40]} ({self.snap.approvals[nxt.id].get('ts')}) no longer "
                         f"counts: the plan was edited since, and the step may now do more ({'; '.join(why)})")
        degraded = health.degraded_news(self.layout, str((self.snap.last or {}).get("ts", "")), self.env)
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
        parks = self.env.get(PARK_APPROVALS) == "1" and not self.plan.parallel
        return render(self.plan, self.snap, session, self.torn, [*extra, *news], self.approved, self.worker, leases,
                      idle, parks, self.reading_note())

    def _once_news(self) -> List[str]:
        """UNKNOWN lines for side effects whose outcome is unknown; ONCE lines for the results of NEXT."""
        if not self.snap.once_open and not self.snap.once_recent:
            return []
        from store.state import once_keys

        done = once_keys.result_news(self.snap, self.next.id) if self.next is not None else []
        return once_keys.unknown_news(self.layout, self.snap) + done
