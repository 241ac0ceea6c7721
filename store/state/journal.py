"""Reading and writing one job's state: every ledger append goes through :func:`append`.

An append takes the lock, repairs a torn tail left by a killed writer, catches the snapshot up,
seals the record onto the chain, writes it in one ``write`` call, then saves the snapshot. When
the environment selects a database (``store.backend.choice``), the records are kept there
instead, and :func:`shared` hands reading and writing to ``store.state.remote``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from store.base import durable
from store.base.errors import CHECK, BatonError
from store.base.values import Frozen
from store.state import snapshot
from store.state.ledger import (
    GENESIS,
    LedgerError,
    check_link,
    format_line,
    iter_lines,
    parse_line,
    read_last,
    read_tail,
    seal,
)
from store.state.location import Layout
from store.state.snapshot import STEP_STATUSES, Loaded, Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Dict, Iterator, List, Optional, TextIO, Tuple

    Chosen = Tuple[str, str, str, Dict[str, Any]]  # step, status, note, extra fields

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


def shared() -> Optional[ModuleType]:
    """Where the records are kept: ``None`` for ``.baton/steps.jsonl``, else the module that keeps
    them in the database the environment selects."""
    from store.backend.choice import selected

    if selected(os.environ) is None:
        return None
    from store.state import remote

    return remote


def refresh_shared(root: str, project: str, worker: str) -> None:
    """Read a job kept in a database into the clone's copy (what a hook starts in the background);
    one at a time per clone, and a failure is reported as a hook's would be (DEGRADED)."""
    layout = Layout(Path(root), Path(project))
    with durable.locked(layout.root / "refresh.lock"):  # mirror.REFRESH_LOCK
        try:
            read_state(layout, worker=worker, fresh=True)
        except Exception as exc:  # noqa: BLE001 - a detached process: its only voice is errors.log
            from store.state import health

            health.report_failure(layout, "refresh", f"{type(exc).__name__}: {exc}"[:300])


def read_state(layout: Layout, save: bool = True, worker: str = "", fresh: bool = True) -> Loaded:
    """The current snapshot; saved back (under the lock) when it had to catch up. With a database,
    ``fresh=False`` lets a hook use the clone's recent copy, and ``worker`` is marked active."""
    remote = shared()
    if remote is not None:
        loaded: Loaded = remote.read_state(layout, worker, fresh, fields)
        return loaded
    loaded = snapshot.load(layout.snapshot, layout.ledger)
    if loaded.changed and save and layout.root.is_dir():
        try:
            with durable.locked(layout.lock):
                # save what was just built unless a writer moved the ledger on meanwhile
                if _size(layout) == loaded.snapshot.offset + loaded.torn:
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


def fields(snap: Snapshot, step: str, status: str, note: str, extra: Dict[str, Any]) -> Dict[str, Any]:
    """The fields of a new record (all but seq, prev and hash) on the state ``snap``."""
    return {
        "ts": now_iso(),
        "step": step,
        "status": status,
        "note": cap_note(note),
        "session": os.environ.get("CLAUDE_CODE_SESSION_ID", ""),
        "attempt": _attempt(snap, step, status),
        **extra,
    }


def append(layout: Layout, step: str, status: str, note: str = "", **extra: Any) -> Dict[str, Any]:
    """Append one record and return it. The caller has validated ``step`` and ``status``. With a
    database that cannot be reached, the record is queued and returned with ``queued: True``."""
    remote = shared()
    if remote is not None:
        written: Dict[str, Any] = remote.append(layout, (step, status, note, extra), fields)
        return written
    record = append_if(layout, lambda snap: (step, status, note, extra))
    assert record is not None
    return record


def append_if(layout: Layout, choose: Callable[[Snapshot], Optional[Chosen]]) -> Optional[Dict[str, Any]]:
    """Under the ledger's lock, ``choose(snapshot)`` names the record to append, or ``None`` for
    none; the record appended is returned (the file store: a database decides in a transaction)."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with durable.locked(layout.lock):
        last = _repair_tail(layout)
        snap = snapshot.load(layout.snapshot, layout.ledger).snapshot
        if last is not None and snap.seq != last["seq"]:
            snap = snapshot.rebuild(layout.ledger).snapshot
        chosen = choose(snap)
        if chosen is None:
            return None
        seq, prev = (last["seq"] + 1, last["hash"]) if last else (1, GENESIS)
        record = seal(fields(snap, *chosen), seq, prev)
        end = durable.append_line(layout.ledger, format_line(record), sync=fsync_enabled())
        snap.apply(record, end)
        durable.atomic_write(layout.snapshot, snap.to_bytes(), sync=False)
    return record


def last_records(layout: Layout, count: int) -> Tuple[List[Dict[str, Any]], bytes]:
    """The last ``count`` records, oldest first, and the torn tail (always empty in a database)."""
    remote = shared()
    if remote is not None:
        return remote.last_records(layout, count), b""
    return read_last(layout.ledger, count)


class Verdict(Frozen):
    __slots__ = ("records", "last_hash", "torn", "problem")

    def __init__(self, records: int, last_hash: str, torn: int, problem: str) -> None:
        self.records, self.last_hash, self.torn = records, last_hash, torn
        self.problem = problem  # empty when the chain is intact


def verify(layout: Layout) -> Verdict:
    """Walk the whole ledger (the one full read baton does) and name the first bad line."""
    remote = shared()
    return verify_lines(remote.lines(layout) if remote else iter_lines(layout.ledger))


def verify_lines(lines: Iterator[Tuple[int, bytes, bool]]) -> Verdict:
    """Walk ``(offset, line, complete)`` in order and name the first bad line."""
    prev: Optional[Dict[str, Any]] = None
    count, line_no = 0, 0
    for _, raw, complete in lines:
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
