"""The job's figures across every session, kept in ``.baton/monitor/figures.jsonl`` and caught up
incrementally: the ledger, ``events.jsonl`` and each session's transcripts (its subagents' too)
are read from the offsets reached last time, never again from the start.

The file is derived: when it is lost, damaged or no longer matches the ledger it is rebuilt from
the ledger, the events still on disk and the transcripts it knew of. Writers hold ``hooks.lock``.
How it is laid out, so that a hook reads and writes only the parts its fold changes: see
:mod:`store.monitor.stored`.
"""

from __future__ import annotations

import os

from store.base import durable, jsonc
from store.ledger.ledger import GENESIS, iter_objects
from store.monitor import compact, fold, stored, tally, transcript
from store.monitor.clock import epoch
from store.state.location import EVENTS, HOOKS_LOCK, LEDGER, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Collection, Dict, List, Mapping, Optional, Tuple

    from store.plan.plan import Plan

VERSION = stored.VERSION
FOLDER = "monitor"
FILE = "figures.jsonl"
OLD_FILE = "figures.json"  # version 1, one JSON object: read while there is no FILE, then left to older batons


def new() -> Dict[str, Any]:
    return {"version": VERSION, "ledger": [0, 0, GENESIS], "events": [0, 0, "", ""], "first": None, "last": None,
            "status": {}, "next": [None, None], "history": [], "approved": [], "waits": [], "progress": None,
            "steps": {}, "sessions": {}, "transcripts": {}, "tokens": [0, 0, 0, 0], "turns": 0, "calls": 0,
            "failures": 0, "error": None, "refusals": {}, "alerts": [], "alerts_total": 0, "lost_events": 0,
            "marks": [], "rev": 0}


# as strings: the Stop hook reads and saves the figures without importing pathlib
def folder(layout: Layout) -> str:
    return layout.file(FOLDER)


def path_of(layout: Layout) -> str:
    return os.path.join(folder(layout), FILE)


def load(layout: Layout, lazy: bool = False) -> Dict[str, Any]:
    """The saved figures, or fresh ones when there are none or they are unreadable or of another
    version. ``lazy`` (a hook's fold): the steps' bars and the long lists stay encoded until the
    fold changes them."""
    try:
        fig = _read(layout, lazy)
    except (OSError, ValueError):
        return new()
    if fig is None or not isinstance(fig["events"], list) or len(fig["events"]) != 4:
        return new()
    return fig


def _read(layout: Layout, lazy: bool) -> Optional[Dict[str, Any]]:
    required = set(new())
    try:
        with open(path_of(layout), "rb") as handle:
            return stored.parse(handle.read().decode("ascii"), required, lazy)
    except FileNotFoundError:
        pass
    with open(os.path.join(folder(layout), OLD_FILE), "rb") as handle:
        data = jsonc.loads(handle.read().decode("utf-8"))
    return data if isinstance(data, dict) and data.get("version") == 1 and not required - set(data) else None


def save(layout: Layout, fig: Mapping[str, Any]) -> None:
    where = folder(layout)
    if not os.path.isdir(where):
        os.makedirs(where, exist_ok=True)
        durable.atomic_write(os.path.join(where, ".gitignore"),
                             b"# baton's figures and export state: derived, local\n*\n", sync=False)
    durable.atomic_write(path_of(layout), stored.encode(fig).encode("ascii"), sync=False)


def _plan_facts(plan: Plan) -> Tuple[List[str], List[str], List[str]]:
    return (list(plan.ids), [s.id for s in plan.steps if s.needs_approval], [s.id for s in plan.steps if s.validate])


def _new_records(fig: Dict[str, Any], layout: Layout, budget: int = 0) -> Optional[List[Dict[str, Any]]]:
    """The ledger's complete records after those folded, at most ``budget`` of them when given
    (moving the offset past them); ``None`` when the ledger no longer continues what was folded
    (shorter, or another chain)."""
    offset, seq, last_hash = fig["ledger"]
    try:
        size = os.stat(layout.file(LEDGER)).st_size
    except FileNotFoundError:
        size = 0
    if size < offset:
        return None
    records: List[Dict[str, Any]] = []
    for after, record in iter_objects(layout.file(LEDGER), offset):
        if record is not None and isinstance(record.get("seq"), int):
            if not records and offset and (record["seq"] != seq + 1 or record.get("prev") != last_hash):
                return None
            records.append(record)
            seq, last_hash = record["seq"], str(record.get("hash", ""))
        offset = after
        if budget and len(records) >= budget:
            break
    fig["ledger"] = [offset, seq, last_hash]
    return records


MARK = 64  # bytes at the start of an events file, and before the offset, that tell it is the same file


def _mark(path: str, start: int, size: int) -> Optional[str]:
    """``size`` bytes of ``path`` from ``start`` (hex), or ``None`` when the file is shorter."""
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(size)
    except OSError:
        return None
    return data.hex() if len(data) == size else None


def _inode(path: str) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def _same(path: str, offset: int, head: str, tail: str) -> bool:
    """Whether ``path`` begins as the file read last time and holds the same bytes before the offset."""
    return (_mark(path, 0, min(offset, MARK)) == head
            and _mark(path, max(offset - MARK, 0), min(offset, MARK)) == tail)


def _event_files(fig: Dict[str, Any], layout: Layout) -> List[Tuple[str, int]]:
    """Which events files to read from where: the one read last time (by inode, or by its first
    bytes and those before the offset when the inode changed, as in a copied or restored ``.baton``),
    which is the current file or, after a rotation, the rotated one followed by the current one."""
    ino, offset, head, tail = fig["events"]
    current = layout.file(EVENTS)
    old = current + ".1"
    if not offset:
        return [(old, 0), (current, 0)]
    if _inode(current) == ino or (_inode(old) != ino and _same(current, offset, head, tail)):
        return [(current, offset)]
    if _inode(old) == ino or _same(old, offset, head, tail):
        return [(old, offset), (current, 0)]
    fig["lost_events"] += 1  # rotated twice since the last fold: the older lines are gone
    return [(current, 0)]


def _new_events(fig: Dict[str, Any], layout: Layout) -> List[Dict[str, Any]]:
    """The events written since the last fold (following a rotation), moving the offset past them."""
    events: List[Dict[str, Any]] = []
    for path, start in _event_files(fig, layout):
        if not os.path.exists(path):
            continue
        offset = start
        for after, event in iter_objects(path, start):
            offset = after
            if event is not None:
                events.append(event)
        fig["events"] = [_inode(path), offset, _mark(path, 0, min(offset, MARK)) or "",
                         _mark(path, max(offset - MARK, 0), min(offset, MARK)) or ""]
    return events


def fold_events(fig: Dict[str, Any], layout: Layout) -> None:
    """Apply only the new events (before ``events.jsonl`` is rotated away)."""
    for event in _new_events(fig, layout):
        tally.apply_event(fig, event)


def _apply_in_time_order(fig: Dict[str, Any], plan: Plan, records: List[Dict[str, Any]],
                         events: List[Dict[str, Any]], readings: List[Tuple[str, bool, Any]]) -> None:
    """Apply the new records, events and model responses merged by time, so each response finds the
    step that was NEXT when it was written. A record's second ends after everything stamped with it."""
    order, approval = list(plan.ids), [s.id for s in plan.steps if s.needs_approval]
    validated = [s.id for s in plan.steps if s.validate]
    fold.seed(fig, order)
    later = float("inf")
    timed: List[Tuple[float, int, Any]] = [((epoch(r.get("ts")) or 0.0) + 0.999, 0, r) for r in records]
    timed += [(epoch(e.get("ts")) or 0.0, 1, e) for e in events]
    for sid, main, reading in readings:
        timed += [(m.ts if m.ts is not None else later, 2, (sid, main, m)) for m in reading.messages]
        timed += [(r.ts if r.ts is not None else later, 3, (sid, r)) for r in reading.refusals]
    for t, kind, item in sorted(timed, key=lambda x: (x[0], x[1])):
        if kind == 0:
            fold.apply_record(fig, item, order, approval, validated)
        elif kind == 1:
            tally.apply_event(fig, item)
        elif kind == 2:
            tally.apply_message(fig, item[0], item[2], item[1])
        else:
            tally.apply_refusal(fig, None if t == later else t, item[0], item[1])
    for sid, _, reading in readings:
        tally.apply_costs(fig, sid, reading)


def register(fig: Dict[str, Any], session: str, path: str) -> None:
    """Know the transcript of ``session`` (from a hook's payload) so later folds read it."""
    if session and path:
        compact.track(fig, session, path)
        fold.session_entry(fig, session)["transcript"] = path


def read_transcripts(fig: Dict[str, Any], sessions: Optional[Collection[str]] = None) -> List[Tuple[str, bool, Any]]:
    """Read what the transcripts of ``sessions`` (all when ``None``) gained, subagents included,
    moving their offsets on: ``(session, main transcript?, reading)`` for each chunk read. For one
    session (a hook) one chunk per transcript; for all (``baton status``...) up to their ends."""
    known: Dict[str, List[Any]] = fig["transcripts"]
    for path, (sid, _, _) in list(known.items()):
        if "/subagents/" not in path.replace(os.sep, "/") and (sessions is None or sid in sessions):
            for sub in transcript.subagent_transcripts(path):
                known.setdefault(sub, [sid, 0, []])
    out = []
    for path, (sid, offset, recent) in list(known.items()):
        if sessions is not None and sid not in sessions:
            continue
        main = "/subagents/" not in path.replace(os.sep, "/")
        while True:
            try:
                size = os.stat(path).st_size
                if size == offset:
                    break
                reading = transcript.read(path, offset, recent)
            except OSError:
                break
            out.append((sid, main, reading))
            known[path] = [sid, reading.offset, reading.recent]
            if sessions is not None or reading.offset in (offset, size):
                break
            offset, recent = reading.offset, reading.recent
    return out


LEDGER_BUDGET = 20_000  # ledger records a hook folds at most per call (about a third of a second)


def _fresh(fig: Mapping[str, Any]) -> Dict[str, Any]:
    """New figures that read every transcript ``fig`` knew of again, from its start."""
    out = new()
    out["transcripts"] = {p: [sid, 0, []] for p, (sid, _, _) in fig["transcripts"].items()}
    return out


def catch_up(fig: Dict[str, Any], layout: Layout, plan: Plan, sessions: Optional[Collection[str]] = None,
             transcripts: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """``fig`` with everything new applied; a fresh rebuild when the ledger no longer matches or a
    part of the saved figures is damaged. ``transcripts`` maps session ids to transcript paths a
    hook was just told about. A hook (``sessions`` given) folds at most :data:`LEDGER_BUDGET`
    ledger records per call, so that a long ledger met for the first time (an existing job) is
    caught up over several calls, never in one hook that would run out of time; ``baton status``
    folds all of it."""
    try:
        return _catch_up(fig, layout, plan, sessions, transcripts or {})
    except stored.Unreadable:
        return _catch_up(_fresh(fig), layout, plan, sessions, transcripts or {})


def _catch_up(fig: Dict[str, Any], layout: Layout, plan: Plan, sessions: Optional[Collection[str]],
              transcripts: Mapping[str, str]) -> Dict[str, Any]:
    for sid, where in transcripts.items():
        register(fig, sid, where)
    budget = LEDGER_BUDGET if sessions is not None else 0
    records = _new_records(fig, layout, budget)
    if records is None:
        fig = _fresh(fig)
        records = _new_records(fig, layout, budget) or []
    events = _new_events(fig, layout)
    for event in events:  # a session that just started: read its transcript in this same fold
        if event.get("kind") == "session" and isinstance(event.get("transcript"), str):
            register(fig, str(event.get("session") or ""), event["transcript"])
    _apply_in_time_order(fig, plan, records, events, read_transcripts(fig, sessions))
    compact.compact(fig)
    if sessions is None:
        stored.decode_all(fig)  # what the whole figures' readers get
    return fig


def refresh(layout: Layout, plan: Plan, sessions: Optional[Collection[str]] = None,
            transcripts: Optional[Mapping[str, str]] = None, write: bool = True) -> Dict[str, Any]:
    """Load, catch up and save the figures under ``hooks.lock``; ``transcripts`` maps session ids
    to transcript paths a hook was just told about. A store that cannot be written still answers."""
    if not os.path.isdir(layout.state_dir):
        return catch_up(new(), layout, plan, sessions)
    try:
        with durable.locked(layout.file(HOOKS_LOCK)):
            fig = catch_up(load(layout, lazy=sessions is not None), layout, plan, sessions, transcripts)
            if write:
                save(layout, fig)
            return fig
    except PermissionError:
        return catch_up(load(layout, lazy=sessions is not None), layout, plan, sessions)
