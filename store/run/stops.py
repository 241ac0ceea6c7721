"""Why a run stops, with which exit code, and what the person (and the ledger) is told to do next.

The job itself may say stop before a session starts: every step is complete (0), NEXT waits for a
person's approval (3), a job limit is reached (4). The run says stop when sessions keep recording
nothing (5), when an API error needs a person or errors outlast ``--max-retries`` (6), and when it is
interrupted (130). Another run holding the job is refused with 7 (see ``lock``).
"""

from __future__ import annotations

import shlex

from store.base.text import one_line
from store.base.values import Frozen
from store.monitor import limits
from store.state.job import Job
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional

CODES = {"done": 0, "approval": 3, "limit": 4, "idle": 5, "api": 6, "interrupted": 130}
RECORDED = ("done", "failed", "skipped")  # outcomes; `running` alone is an intent, not progress


class Stop(Frozen):
    __slots__ = ("outcome", "code", "message", "note")

    def __init__(self, outcome: str, message: str, note: str = "") -> None:
        self.outcome, self.code = outcome, CODES[outcome]
        self.message = message  # for the person, on the terminal (may span lines)
        self.note = note  # for the ledger's stop record ('' writes none)


def next_words(job: Job) -> str:
    nxt = job.next
    if nxt is None:
        return "all steps are complete"
    return f"NEXT: {one_line(nxt.id, 60)}" + (f" - {one_line(nxt.title, 80)}" if nxt.title else "")


def spent_cost(job: Job, counters: Mapping[str, Any], unrecorded: float = 0.0) -> float:
    """The job's cost so far: the larger of the hooks' transcript sums and the session records (plus
    ``unrecorded``, a session's cost whose record is not in the ledger yet)."""
    value = counters.get("cost_usd", 0)
    hooks = float(value) if isinstance(value, (int, float)) else 0.0
    return max(hooks, job.snap.session_cost_usd + unrecorded)


def approve_command(claude: str, plugin_dir: str, step: str) -> str:
    """What a person runs in a terminal to approve ``step`` (answered by baton's prompt hook, no model)."""
    quoted = f'"{step}"' if any(c.isspace() for c in step) or not step else step
    words = [claude] + (["--plugin-dir", plugin_dir] if plugin_dir else []) + ["-p", f"/baton:approve {quoted}"]
    return shlex.join(words)


def reached(job: Job, counters: Mapping[str, Any], unrecorded: float = 0.0) -> List[str]:
    """The job limits reached, as phrases (``"turns 2 of 2"``), cost counted from the session records too."""
    return limits.reached(job.plan.limits, job.snap,
                          {**counters, "cost_usd": spent_cost(job, counters, unrecorded)})


def from_job(job: Job, counters: Mapping[str, Any], claude: str, plugin_dir: str, again: str,
             parked: Optional[Mapping[str, Any]] = None) -> Optional[Stop]:
    """The stop the job's own state calls for before another session, or None to go on. ``parked``:
    the record of the session that parked a call on NEXT (see ``records.parked_on``)."""
    nxt = job.next
    if nxt is None and job.complete():
        return Stop("done", "all steps complete")
    if nxt is None:  # a parallel plan whose ready steps other workers hold: the run waits, it is not done
        return None
    if job.waiting_for_approval():
        held = ""
        if parked is not None:
            call = parked.get("parked") or {}
            held = (f"\n            (it resumes session {str(parked.get('session'))[:8]} at the call it parked: "
                    f"{one_line(str(call.get('what') or call.get('tool')), 80)})")
        message = (f"waiting for a person's approval of {one_line(nxt.id, 60)}"
                   + (f" ({one_line(nxt.title, 80)})" if nxt.title else "") + ".\n"
                   f"  approve:  {approve_command(claude, plugin_dir, nxt.id)}\n"
                   f"            (or type /baton:approve {one_line(nxt.id, 60)} in a Claude Code session)\n"
                   f"  then go on: {again}{held}")
        return Stop("approval", message)
    hit = reached(job, counters)
    if hit:
        names = ", ".join(f"limits.{phrase.split()[0]}" for phrase in hit)
        note = (f"limit reached: {', '.join(hit)}. {next_words(job)}. To go on, raise {names} in "
                ".baton/plan.json, then run `baton run` again.")
        return Stop("limit", _with(note, again), note)
    return None


def _with(note: str, again: str) -> str:
    """The ledger's note for the terminal, naming the exact command line that started this run."""
    return note.replace("`baton run`", f"`{again}`")


def recorded_since(before: Snapshot, after: Snapshot) -> List[str]:
    """Step outcomes and approvals recorded after ``before``: ``["a done", "b approved"]``."""
    out = [f"{step} {info.get('status')}" for step, info in after.steps.items()
           if isinstance(info.get("seq"), int) and info["seq"] > before.seq and info.get("status") in RECORDED]
    out += [f"{step} approved" for step, info in after.approvals.items()
            if isinstance(info.get("seq"), int) and info["seq"] > before.seq]
    return out


def idle(job: Job, sessions: int, refused: int, last: str, again: str) -> Stop:
    hint = (f" The last session was refused {refused} tool call(s) (by Claude Code's permissions or baton's "
            "gate): if it lacked permissions, give them after --, e.g. baton run -- --permission-mode "
            "acceptEdits." if refused else "")
    note = (f"no progress: {sessions} session(s) in a row recorded nothing (--max-idle-sessions {sessions}). "
            f"{next_words(job)}." + (f" The last one ended: {one_line(last, 160)}." if last else "")
            + " Look at what the last session did (its id is in the session record), "
            f"fix what blocks it, then run `baton run` again.{hint}")
    return Stop("idle", _with(note, again), note)


def api(job: Job, detail: str, failures: int, permanent: bool, again: str) -> Stop:
    why = (f"an API error that retrying will not fix: {detail}" if permanent
           else f"{failures} API errors in a row (--max-retries), the last: {detail}")
    note = f"stopped after {why}. {next_words(job)}. Run `baton run` again once the API answers."
    return Stop("api", _with(note, again), note)


def interrupted(job: Job, signal_name: str, again: str) -> Stop:
    note = f"interrupted by {signal_name}. {next_words(job)}. Run `baton run` to go on."
    return Stop("interrupted", _with(note, again), note)
