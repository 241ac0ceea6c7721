"""The brief: PLAN / DONE / NEXT / LAST, then a line for each piece of news, never more.

Built by walking the plan against the snapshot, so its size and cost do not depend on the
ledger's length, and bounded for any plan: long lists become counts plus the names nearest NEXT.
At most :data:`MAX_CHARS` characters.
"""

from __future__ import annotations

from store.base.text import join_within, one_line
from store.base.values import Frozen
from store.plan.plan import Plan, Step
from store.state import workers
from store.state.leases import Lease, others_line
from store.state.leases import short as short_worker
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Tuple

MAX_CHARS = 2000
NAME = 40
PLAN_BUDGET = 520
DONE_BUDGET = 400
NEWS_LINE = 260
COMPLETE = ("done", "skipped")
ALL_DONE = "(all steps complete - stop)"


class Progress(Frozen):
    __slots__ = ("done", "next", "running")

    def __init__(self, done: Tuple[str, ...], next: Optional[Step], running: Tuple[str, ...]) -> None:
        self.done = done  # complete steps (done or skipped), plan order
        self.next = next
        self.running = running  # steps whose latest record is "running"


def progress(plan: Plan, snap: Snapshot, worker: str = "") -> Progress:
    """What is done, NEXT for ``worker`` (see ``workers.next_for``), and what is running."""
    status = {sid: str(snap.steps.get(sid, {}).get("status", "")) for sid in plan.ids}
    done = tuple(sid for sid in plan.ids if status[sid] in COMPLETE)
    nxt = workers.next_for(plan, snap, worker)
    running = tuple(sid for sid in plan.ids if status[sid] == "running")
    return Progress(done, nxt, running)


def _waits(plan: Plan, step_id: str, approved: Callable[[str], bool]) -> bool:
    step = plan.step(step_id)
    return step is not None and step.needs_approval and not approved(step_id)


def _short(name: str) -> str:
    return one_line(name, NAME)


def _plan_line(plan: Plan, nxt: Optional[Step]) -> str:
    names = [_short(s) for s in plan.ids]
    full = ", ".join(names)
    if len(full) <= PLAN_BUDGET:
        return f"PLAN: {full}"
    at = plan.ids.index(nxt.id) if nxt else len(names) - 1
    window = names[max(at - 2, 1): at + 3]
    parts = [names[0]] + (["\u2026"] if at - 2 > 1 else []) + window
    if at + 3 < len(names) - 1:
        parts += ["\u2026"]
    if at + 3 < len(names):
        parts += [names[-1]]
    return f"PLAN: {len(names)} steps: " + ", ".join(parts)


def _done_line(plan: Plan, snap: Snapshot, done: Sequence[str]) -> str:
    if not done:
        return "DONE: (nothing yet)"
    skipped = " (skipped)"
    names = [_short(s) + (skipped if snap.steps[s].get("status") == "skipped" else "") for s in done]
    full = ", ".join(names)
    if len(full) <= DONE_BUDGET:
        return f"DONE: {full}"
    recent = join_within(names, DONE_BUDGET - 40)
    return f"DONE: {len(done)} of {len(plan.ids)}, latest: {recent}"


def _next_line(nxt: Optional[Step]) -> str:
    if nxt is None:
        return f"NEXT: {ALL_DONE}"
    title = f" - {one_line(nxt.title, 100)}" if nxt.title else ""
    return f"NEXT: {nxt.id}{title}"


def _last_line(snap: Snapshot) -> List[str]:
    last = snap.last
    if not last:
        return []
    note = one_line(str(last.get("note") or ""), 80)
    step = one_line(str(last.get("step", "")), NAME)
    return [f"LAST: {step} {last.get('status', '')}" + (f" {note}" if note else "")]


def _waiting(step_id: str, parks: bool) -> str:
    """The WAITING line; ``parks``: an unattended session parks the step's first change until then."""
    if parks:
        return (f"WAITING: {_short(step_id)} needs a person's approval; this unattended session can wait for it: "
                f"prepare {_short(step_id)} and make its first change, which baton holds (the session ends there) "
                "and runs once a person approves; do not record it before")
    return (f"WAITING: {_short(step_id)} needs a person's approval (they type /baton:approve "
            f"{_short(step_id)}); until then only read, and do not record it")


def _news(plan: Plan, snap: Snapshot, prog: Progress, session: str, torn: int,
          approved: Callable[[str], bool], leases: Sequence[Lease] = (), worker: str = "",
          parks: bool = False) -> List[str]:
    news = []
    nxt = prog.next
    if nxt is not None:
        info = snap.steps.get(nxt.id, {})
        if info.get("status") == "failed":
            note = one_line(str(info.get("note") or ""), 120)
            news.append(f"RETRY: {_short(nxt.id)} failed on attempt {info.get('attempt', 1)}: {note}")
        if nxt.needs_approval and not approved(nxt.id):
            news.append(_waiting(nxt.id, parks))
    left = workers.left_running(snap, nxt.id) if nxt is not None else None
    if nxt is not None and left is not None:
        how = "gave it back" if left[2] else "stopped showing activity until its lease expired"
        news.append(f"LEFT RUNNING: {_short(nxt.id)} was claimed by worker {short_worker(left[0])} at {left[1]}, "
                    f"which {how} without recording it done: it may be partly done; verify its effects before "
                    "redoing it")
    running = prog.running  # in a parallel plan only NEXT's matters: the other running steps are others' work
    if plan.parallel:
        running = tuple(s for s in running if nxt is not None and s == nxt.id and left is None)
    for sid in running[:3]:
        info = snap.steps.get(sid, {})
        owner = str(info.get("session") or "")
        if owner and owner == session:
            continue
        who = f"session {owner[:8]}" if owner else "an earlier session"
        news.append(f"LEFT RUNNING: {_short(sid)} was started by {who} at {info.get('ts', '?')} and never "
                    "recorded: it may be partly done; verify its effects before redoing it")
    if torn:
        news.append("STORE: the ledger's last line is torn (a writer was killed); it was skipped and the "
                    "next record repairs it")
    for problem in snap.problems[:2]:
        news.append(f"DEGRADED: ledger damaged at {one_line(problem, 120)}; run `baton verify`")
    others = others_line(leases, worker) if plan.parallel else None
    news += [others] if others else []
    return news


def render(plan: Plan, snap: Snapshot, session: str = "", torn: int = 0, news: Sequence[str] = (),
           approved: Optional[Callable[[str], bool]] = None, worker: str = "",
           leases: Sequence[Lease] = (), idle: Optional[str] = None, parks: bool = False, reading: str = "") -> str:
    """The brief text (lines joined by newlines, no trailing newline), at most MAX_CHARS long.
    ``worker`` picks NEXT in a parallel plan; ``leases`` tell what the other workers are doing;
    ``idle`` is what NEXT says when the worker holds no step (else it says why none is ready);
    ``parks``: a call that waits for an approval is parked, not refused (store.gate.parking);
    ``reading``: how far the replay of a long ledger got, when ``snap`` is only its first part (NEXT is
    then not known, and the news that the rest of the ledger may contradict is left out)."""
    prog = progress(plan, snap, worker)
    approved = approved or (lambda sid: sid in snap.approvals)
    next_line = _next_line(prog.next)
    if prog.next is None and plan.parallel and len(prog.done) < len(plan.ids):
        next_line = "NEXT: " + (idle or workers.idle_next(plan, snap, worker, lambda s: _waits(plan, s, approved)))
    if reading:
        next_line = f"NEXT: not known yet ({reading})"
    shown = None if reading else prog.next
    head = [_plan_line(plan, shown), _done_line(plan, snap, prog.done), next_line, *_last_line(snap)]
    found = [] if reading else _news(plan, snap, prog, session, torn, approved, leases, worker, parks)
    lines = head + [one_line(n, NEWS_LINE) for n in [*found, *news]]
    while len("\n".join(lines)) > MAX_CHARS and len(lines) > len(head):
        lines.pop()
    return "\n".join(lines)[:MAX_CHARS]
