"""Whether what the DONE steps produced still holds: ``CHANGED`` when an artifact is missing or no
longer matches its record, ``STALE`` when a step's declared inputs changed since it was recorded
done (unless its ``rerun`` is ``never``). Size and mtime first; a file is hashed only when its
size is the same and its mtime is not. Within a deadline at SessionStart (the brief then says
what was left unchecked); without one for ``baton verify --artifacts``.
"""

from __future__ import annotations

import os
import stat
import time

from store.base.errors import BatonError
from store.base.text import one_line
from store.base.values import Frozen
from store.checkpoint.digests import Hasher, NotRegular, OutOfTime, TooMany, inputs_digest
from store.checkpoint.digests import kind as file_kind
from store.state.checkpointed import DoneRecords

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

    from store.plan.plan import Plan, Step
    from store.state.location import Layout
    from store.state.snapshot import Snapshot

BUDGET_SECONDS = 3.0  # of SessionStart's 10 s: the brief must still be injected when a tree is huge
SHOWN = 3


class Finding(Frozen):
    __slots__ = ("step", "kind", "detail", "rerun")

    def __init__(self, step: str, kind: str, detail: str, rerun: str = "skip") -> None:
        self.step, self.kind, self.detail, self.rerun = step, kind, detail, rerun  # kind: ok, changed, stale


class Checked(Frozen):
    __slots__ = ("findings", "complete")

    def __init__(self, findings: List[Finding], complete: bool) -> None:
        self.findings, self.complete = findings, complete


def _late(deadline: Optional[float]) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime()


def _sha(hasher: Hasher, path: str, full: str, st: os.stat_result, deadline: Optional[float]) -> str:
    try:
        return hasher.sha(path, full, st, deadline)
    except NotRegular:
        return ""  # swapped between the stat and the open: it differs from what was recorded
    except OSError:
        return ""


def _artifacts(layout: Layout, step: Step, record: Dict[str, Any], hasher: Hasher,
               deadline: Optional[float]) -> List[Finding]:
    problems, ok, uris = [], 0, 0
    root = str(layout.project) + os.sep  # joined by hand: os.path.join costs more than the stat
    for index, entry in enumerate(record.get("artifacts") or ()):
        if not isinstance(entry, dict) or "path" not in entry:
            uris += 1
            continue
        path = str(entry["path"])
        full = path if path.startswith("/") else root + path
        try:
            st = os.stat(full)
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{path} changed (it is {file_kind(st.st_mode)} now)")
        elif st.st_size != entry.get("size"):
            problems.append(f"{path} changed (size {entry.get('size')} -> {st.st_size})")
        elif st.st_mtime_ns != entry.get("mtime_ns") and _sha(hasher, path, full, st, deadline) != entry.get("sha256"):
            problems.append(f"{path} changed (its content differs)")
        else:
            ok += 1
        if index % 64 == 63:
            _late(deadline)
    if problems:
        more = f" (and {len(problems) - 2} more)" if len(problems) > 2 else ""
        return [Finding(step.id, "changed", "; ".join(problems[:2]) + more, step.rerun)]
    if ok or uris:
        return [Finding(step.id, "ok", f"{ok} artifacts unchanged" + (f", {uris} URIs not checkable" if uris else ""))]
    return []


def _inputs(layout: Layout, step: Step, record: Dict[str, Any], hasher: Hasher,
            deadline: Optional[float]) -> List[Finding]:
    recorded = (record.get("revision") or {}).get("inputs")
    if not step.inputs or step.rerun == "never" or not recorded:
        return []
    try:
        digest, count, stamps = inputs_digest(layout.project, step.inputs, hasher, deadline)
    except TooMany as exc:
        return [Finding(step.id, "stale", f"its inputs cannot be checked: {exc}", step.rerun)]
    if digest == recorded:
        return [Finding(step.id, "ok", f"{count} input files unchanged")]
    revision = record.get("revision") or {}
    since = revision.get("input_mtime_ns")
    newer = [rel for rel, mtime in stamps if mtime > since] if isinstance(since, int) else []
    was = revision.get("input_files")
    detail = f"changed: {', '.join(newer[:2])}" + (" ..." if len(newer) > 2 else "") if newer else (
        f"{was} files then, {count} now" if was != count else "their content changed")
    return [Finding(step.id, "stale", f"its inputs changed since it was recorded done ({detail})", step.rerun)]


def check(layout: Layout, plan: Plan, snap: Snapshot, deadline: Optional[float]) -> Checked:
    """Every DONE step with a checkpoint, in plan order, until ``deadline`` (None: no limit). With
    the job in a database that cannot be reached, raises its ``Unreachable`` (a BatonError)."""
    hasher, findings, complete = Hasher(layout), [], True
    # with no deadline (verify --artifacts), a database's DONE steps a baton before the mark recorded too
    records = DoneRecords(layout, snap, plan.ids, every_done=deadline is None)
    try:
        for step in plan.steps:
            record = records.get(step.id)  # with a database, the first call reads every step's record at once
            if record is None:
                continue
            _late(deadline)
            findings += _artifacts(layout, step, record, hasher, deadline)
            findings += _inputs(layout, step, record, hasher, deadline)
    except OutOfTime:
        complete = False
    hasher.save()
    return Checked(findings, complete)


def _advice(finding: Finding) -> str:
    redo = f"baton record {finding.step} running, redo it, then record it done"
    if finding.rerun == "never":
        return "its rerun is never: do not redo it; tell the person"
    if finding.kind == "stale" and finding.rerun == "redo":
        return f"redo it: {redo}"
    return f"do not trust it: check it, and if it no longer holds, {redo}"


def news(layout: Layout, plan: Plan, snap: Snapshot, budget: float = BUDGET_SECONDS) -> List[str]:
    """The brief's CHANGED and STALE lines (at most :data:`SHOWN` of each, then a count)."""
    try:
        checked = check(layout, plan, snap, time.monotonic() + budget)
    except BatonError as exc:  # the job's database cannot be reached: said, and the brief still comes
        return ["UNCHECKED: the DONE steps' artifacts and inputs were not checked; run `baton verify --artifacts` "
                f"once this is fixed: {one_line(exc.message, 160)}"]
    lines: List[str] = []
    for kind, word in (("changed", "CHANGED"), ("stale", "STALE")):
        hits = [f for f in checked.findings if f.kind == kind]
        lines += [f"{word}: {one_line(f.step, 40)}: {one_line(f.detail, 140)}: {_advice(f)}" for f in hits[:SHOWN]]
        if len(hits) > SHOWN:
            lines.append(f"{word}: {len(hits) - SHOWN} more steps; run `baton verify --artifacts`")
    if not checked.complete:
        lines.append(f"UNCHECKED: not every DONE step's artifacts and inputs could be checked within {budget:g}s; "
                     "run `baton verify --artifacts`")
    return lines


def report_lines(findings: List[Finding]) -> List[str]:
    """``baton verify --artifacts``: one line per checked step and kind."""
    if not findings:
        return ["artifacts: no DONE step carries artifacts or an inputs digest"]
    names = {"ok": "ok", "changed": "CHANGED", "stale": "STALE"}
    return [f"{names[f.kind]:<8}{f.step}: {f.detail}" for f in findings]
