"""Reading and writing one job's state: every ledger append goes through :func:`append`.

An append takes the lock, repairs a torn tail left by a killed writer, catches the snapshot up,
seals the record onto the chain, writes it in one ``write`` call, then saves the snapshot (and
moves ``baton once`` entries into their index shards, ``store.state.effects``).
"""

from __future__ import annotations

import json
import os
import sys
import time

from store.base import durable
from store.base.errors import CHECK, BatonError
from store.base.values import Frozen
from store.state import effects, snapshot
from store.state.ledger import GENESIS, LedgerError, check_link, format_line, iter_lines, parse_line, read_tail, seal
from store.state.location import Layout
from store.state.snapshot import STEP_STATUSES, Loaded, Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, TextIO

NOTE_CAP = 300
STATUSES = STEP_STATUSES  # what `record` accepts; baton writes approved and stop itself


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def cap_note(note: str) -> str:
    return note if len(note) <= NOTE_CAP else note[: NOTE_CAP - 1] + "\u2026"


def fsync_enabled() -> bool:
    return os.environ.get("BATON_FSYNC", "1") != "0"


def warn_torn(torn: int, stream: Optional[TextIO] = None) -> None:
    if torn:
        print(
            f"baton: warning: steps.jsonl ends with a torn line ({torn} bytes, a writer was killed "
            "mid-append); skipped, the next record repairs it",
            file=stream or sys.stderr,
        )


def read_state(layout: Layout, save: bool = True) -> Loaded:
    """The current snapshot; saved back (under the lock) when it had to catch up."""
    loaded = snapshot.load(layout.snapshot, layout.ledger)
    if loaded.changed and save and layout.root.is_dir():
        try:
            with durable.locked(layout.lock):
                # save what was just built unless a writer moved the ledger on meanwhile
                if _size(layout) == loaded.snapshot.offset + loaded.torn:
                    effects.flush(layout, loaded.snapshot)
                    durable.atomic_write(layout.snapshot, loaded.snapshot.to_bytes(), sync=False)
        except OSError:
            pass  # a read-only store still answers; the snapshot is only a cache
    return loaded


def _size(layout: Layout) -> int:
    try:
        return layout.ledger.stat().st_size
    except FileNotFoundError:
        return 0


def _repair_tail(layout: Layout) -> Optional[Dict[str, Any]]:
    """Make the ledger end on a complete line; return its last record (None when empty)."""
    try:
        tail = read_tail(layout.ledger)
    except LedgerError as exc:
        raise BatonError(f"{layout.ledger}: the last line is corrupt ({exc}); run `baton verify`", CHECK) from None
    if not tail.torn:
        return tail.last
    try:  # killed just before the newline: the record itself is whole
        record = parse_line(tail.torn)
        check_link(record, tail.last)
        durable.append_line(layout.ledger, b"\n", sync=fsync_enabled())
        return record
    except LedgerError:
        pass
    entry = {"ts": now_iso(), "offset": tail.complete_size, "bytes": tail.torn.decode("latin-1")}
    durable.append_line(layout.torn, json.dumps(entry).encode("ascii") + b"\n", sync=False)
    os.truncate(layout.ledger, tail.complete_size)
    return tail.last


def _attempt(snap: Snapshot, step: str, status: str) -> int:
    prior = snap.steps.get(step)
    if prior is None:
        return 1
    number = int(prior.get("attempt") or 1)
    if status not in STATUSES:
        return number
    return number if prior.get("status") == "running" else number + 1


def append(layout: Layout, step: str, status: str, note: str = "", sync: Optional[bool] = None,
           guard: Optional[Callable[[Snapshot], None]] = None, **extra: Any) -> Dict[str, Any]:
    """Append one record and return it. The caller has validated ``step`` and ``status``.

    ``sync`` overrides ``BATON_FSYNC`` (``baton once`` always makes its records durable);
    ``guard`` sees the current snapshot inside the lock and may raise to append nothing."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with durable.locked(layout.lock):
        last = _repair_tail(layout)
        snap = snapshot.load(layout.snapshot, layout.ledger).snapshot
        if last is not None and snap.seq != last["seq"]:
            snap = snapshot.rebuild(layout.ledger).snapshot
        if guard is not None:
            guard(snap)
        fields: Dict[str, Any] = {
            "ts": now_iso(),
            "step": step,
            "status": status,
            "note": cap_note(note),
            "session": os.environ.get("CLAUDE_CODE_SESSION_ID", ""),
            "attempt": _attempt(snap, step, status),
            **extra,
        }
        seq, prev = (last["seq"] + 1, last["hash"]) if last else (1, GENESIS)
        record = seal(fields, seq, prev)
        line = format_line(record)
        end = durable.append_line(layout.ledger, line, sync=fsync_enabled() if sync is None else sync)
        snap.apply(record, end, end - len(line))
        effects.flush(layout, snap)
        durable.atomic_write(layout.snapshot, snap.to_bytes(), sync=False)
    return record


class Verdict(Frozen):
    __slots__ = ("records", "last_hash", "torn", "problem")

    def __init__(self, records: int, last_hash: str, torn: int, problem: str) -> None:
        self.records, self.last_hash, self.torn = records, last_hash, torn
        self.problem = problem  # empty when the chain is intact


def verify(layout: Layout) -> Verdict:
    """Walk the whole ledger (the one full read baton does) and name the first bad line."""
    prev: Optional[Dict[str, Any]] = None
    count, line_no = 0, 0
    for _, raw, complete in iter_lines(layout.ledger):
        line_no += 1
        if not complete:
            return Verdict(count, prev["hash"] if prev else GENESIS, len(raw), "")
        try:
            record = parse_line(raw)
            check_link(record, prev)
        except LedgerError as exc:
            return Verdict(count, prev["hash"] if prev else GENESIS, 0, f"line {line_no}: {exc}")
        prev, count = record, count + 1
    return Verdict(count, prev["hash"] if prev else GENESIS, 0, "")
