"""One job as the hooks and the CLI see it: plan, up-to-date snapshot, valid approvals, NEXT."""

from __future__ import annotations

import os

from store.state import journal
from store.state.brief import progress
from store.state.plan import Plan, Step, load_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence

    from store.state.location import Layout


class Job:
    """Loaded once per process; reads only the plan, the snapshot and a stat of the ledger."""

    def __init__(self, layout: Layout, env: Mapping[str, str], save: bool = True) -> None:
        self.layout, self.env = layout, env
        self.plan: Plan = load_plan(layout.plan)
        loaded = journal.read_state(layout, save=save)
        self.snap, self.torn = loaded.snapshot, loaded.torn
        self._approved: Optional[Dict[str, bool]] = None  # checked on first use: most calls never need it
        self.next: Optional[Step] = progress(self.plan, self.snap).next

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
        """A signed approval given while the step was waiting (every step before it complete, and
        recorded before the approval: an approval given ahead of time counts for nothing), for a
        plan that does not now let the step do more than was approved."""
        entry = self.snap.approvals.get(step_id)
        if entry is None or not self.approvals_checked.get(step_id, False) or self.approval_widened(step_id):
            return False
        seq = entry.get("seq")
        for step in self.plan.steps:
            if step.id == step_id:
                return True
            info = self.snap.steps.get(step.id, {})
            if info.get("status") not in ("done", "skipped") or not isinstance(seq, int) or \
                    not isinstance(info.get("seq"), int) or info["seq"] > seq:
                return False
        return False

    def approval_widened(self, step_id: str) -> Sequence[str]:
        """Why the step's approval no longer counts: the plan now lets it do more (empty: it holds)."""
        entry, step = self.snap.approvals.get(step_id), self.plan.step(step_id)
        if not entry or step is None or not isinstance(entry.get("scope"), dict):
            return []
        from store.state.scope import scope_of, widened

        return widened(entry["scope"], scope_of(self.plan, step))

    def waiting_for_approval(self) -> bool:
        return self.next is not None and self.next.needs_approval and not self.approved(self.next.id)

    def forged(self) -> Sequence[str]:
        """Steps whose latest approval record carries no valid signature."""
        return [s for s, ok in self.approvals_checked.items() if not ok] if self.snap.approvals else []

    def brief(self, session: str = "", news: Sequence[str] = ()) -> str:
        from store.state import health
        from store.state.brief import render

        extra = self._once_news()
        extra += [f"ALERT: an approval of {s[:40]} in the ledger is not signed by baton's prompt hook; it is ignored"
                  for s in self.forged()[:2]]
        nxt = self.next
        why = self.approval_widened(nxt.id) if nxt is not None and nxt.needs_approval else []
        if nxt is not None and why and self.approvals_checked.get(nxt.id):
            extra.append(f"APPROVAL: the approval of {nxt.id[:40]} ({self.snap.approvals[nxt.id].get('ts')}) no longer "
                         f"counts: the plan was edited since, and the step may now do more ({'; '.join(why)})")
        degraded = health.degraded_news(self.layout, str((self.snap.last or {}).get("ts", "")))
        extra += [degraded] if degraded else []
        return render(self.plan, self.snap, session, self.torn, [*extra, *news], self.approved)

    def _once_news(self) -> List[str]:
        """UNKNOWN lines for side effects whose outcome is unknown; ONCE lines for the results of NEXT."""
        if not self.snap.once_open and not self.snap.once_recent:
            return []
        from store.state import effects

        done = effects.result_news(self.snap, self.next.id) if self.next is not None else []
        return effects.unknown_news(self.layout, self.snap) + done
