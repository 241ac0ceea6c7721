"""The store's operations on one job: append a record, read the job's state, verify the chain.

This is the interface the CLI, the hooks and the monitors use; where the records are kept lies
below it (``steps.jsonl`` through ``store.ledger.ledger``, ``state.json`` through
``store.state.snapshot``; or the database the environment selects, through ``store.state.remote``,
see :func:`shared`), so the callers are the same for either.

Every record goes through :func:`commit_if` (:func:`commit` for a record known in advance). An
append takes the lock, repairs a torn tail left by a killed writer, reads the state, seals the
record onto the chain and writes it in one ``write`` call with fsync. That write is the commit
point: saving the snapshot afterwards is best effort, and when it fails the record stands and the
caller gets a warning, not an error. A *retry* (see ``store.state.attempts``) adds nothing and
returns the record already there. ``baton once`` entries move from the snapshot into their
index shards (``store.state.once_keys``) whenever the snapshot is saved. With a database the
transaction's commit is the commit point, and a record that judges nothing is kept in the
clone's queue while the server cannot be reached (``store.state.remote``).
"""

from __future__ import annotations

import os
import sys
import time

from store.base import jsonc
from store.base.errors import CHECK, USAGE, BatonError, describe, unwritable
from store.base.values import Frozen
from store.ledger.ledger import GENESIS, LedgerError, check_link, format_line, parse_line, read_last, read_tail, seal
from store.state import snapshot
from store.state.location import LEDGER, LOCK, SNAPSHOT, TORN, Layout
from store.state.snapshot import STEP_STATUSES, Loaded, Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TextIO, Tuple

    from store.ledger.chain import Verdict

    Chosen = Tuple[str, str, str, Dict[str, Any]]  # step, status, note, extra fields

NOTE_MAX = 2000  # characters of a note given to baton, kept whole; a longer one is refused (check_note)
COMPOSED_MAX = NOTE_MAX + 1000  # a note baton composes (a validate failure's summary before the note given)
STATUSES = STEP_STATUSES  # what `record` accepts; baton writes approved and stop itself
INLINE_BYTES = 1 << 20  # ledger bytes a reader applies itself; beyond, it reads quickly and rebuilds aside
QUICK_SECONDS = 1.0  # how long a quick read may search the ledger before answering with what it has
REPAIR_HINT = "run `baton repair` to move it aside (kept byte for byte in .baton/quarantine/)"


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_note(note: str) -> str:
    """``note`` as given by a person or the model: kept whole, or refused before anything is
    recorded (a note is not a log: the ledger is read from its end, line by line)."""
    if len(note) > NOTE_MAX:
        raise BatonError(f"the note has {len(note):,} characters and a note is kept whole up to {NOTE_MAX:,}, so "
                         "nothing was recorded: keep it to what a reader needs and put the rest in a file (with "
                         "done, name that file with --artifact FILE)")
    return note


def cap_note(note: str) -> str:
    """A note as the ledger keeps it: whole up to :data:`COMPOSED_MAX` (notes given to baton are
    shorter, see :func:`check_note`); text baton composed beyond that is cut, and says so."""
    if len(note) <= COMPOSED_MAX:
        return note
    said = f" [cut: {len(note):,} characters in all]"
    return note[: COMPOSED_MAX - len(said) - 1] + "\u2026" + said


def fsync_enabled() -> bool:
    return os.environ.get("BATON_FSYNC", "1") != "0"


def warn_torn(torn: int, stream: Optional[TextIO] = None) -> None:
    if torn:
        print(
            f"baton: warning: steps.jsonl ends with a torn line ({torn} bytes, a writer was killed "
            "mid-append); skipped, the next record repairs it",
            file=stream or sys.stderr,
        )


class Committed(Frozen):
    """What an append did: the record (the one already there, for a retry; with a database that
    cannot be reached, the record as queued, ``queued: True``), the state after it, and warnings
    for the person (the record stands whatever they say)."""

    __slots__ = ("record", "loaded", "retry", "warnings")

    def __init__(self, record: Dict[str, Any], loaded: Loaded, retry: bool, warnings: Sequence[str]) -> None:
        self.record, self.loaded, self.retry, self.warnings = record, loaded, retry, tuple(warnings)


class Take(Frozen):
    """A claim a database decides itself (``SELECT ... FOR UPDATE SKIP LOCKED``): ``names(snapshot)``
    lists the steps to try in order, ``pick(snapshot, step)`` the record for the step it locked
    (``None``: no longer claimable), ``lease_seconds`` how long a silent holder keeps a step."""

    __slots__ = ("worker", "lease_seconds", "names", "pick")

    def __init__(self, worker: str, lease_seconds: float, names: Callable[[Snapshot], Sequence[str]],
                 pick: Callable[[Snapshot, str], Optional[Chosen]]) -> None:
        self.worker, self.lease_seconds, self.names, self.pick = worker, lease_seconds, names, pick


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
    from store.base import durable

    layout = Layout(root, project)
    with durable.locked(layout.file("refresh.lock")):  # mirror.REFRESH_LOCK
        try:
            read_state(layout, worker=worker, fresh=True)
        except Exception as exc:  # noqa: BLE001 - a detached process: its only voice is errors.log
            from store.state import health

            health.report_failure(layout, "refresh", f"{type(exc).__name__}: {exc}"[:300])


def read_state(layout: Layout, save: bool = True, steps: Optional[Sequence[str]] = None,
               approvals: Sequence[str] = (), worker: str = "", fresh: bool = True,
               with_claims: bool = False) -> Loaded:
    """The job's state. Given the plan's ``steps`` (and the steps that need an approval), a ledger
    too far ahead of the saved snapshot is read quickly from its end (a partial state, exact for
    those steps; ``with_claims``, a parallel plan's, for the claims too, else the whole ledger is
    replayed, see ``store.state.coldclaims``) while a detached process
    rebuilds the snapshot; otherwise the snapshot is caught up here and, when ``save``, saved back
    under the lock. With no snapshot a hook replays only for its budget and may answer with
    ``reading`` set (``store.state.resume``). With a database, ``fresh=False`` lets a hook use the
    clone's recent copy, and ``worker`` is marked active."""
    remote = shared()
    if remote is not None:
        loaded: Loaded = remote.read_state(layout, worker, fresh, fields)
        return loaded
    # path strings: a hook reading an up-to-date snapshot needs no pathlib
    base = snapshot.read_saved(layout.file(SNAPSHOT), layout.file(LEDGER))
    size = snapshot.ledger_size(layout.file(LEDGER))
    if base is not None and size == base.offset:
        return Loaded(base, 0, False)
    from store.state import resume

    progress = resume.read(layout) if base is None and size else None  # a replay saved part way goes on
    start = base if base is not None else progress.snapshot if progress is not None else None
    behind = size - (start.offset if start is not None else 0)
    if steps is not None and behind > INLINE_BYTES and _quick_allowed(layout):
        from store.state import background, quickread

        background.start(layout)
        quick = quickread.read(layout.ledger, steps, approvals, start, resume.quick_seconds(QUICK_SECONDS),
                               with_claims)
        # a parallel plan's hook claims on what it read, which must be exact: a step the quick read did not
        # reach makes it read on (the replay below) rather than answer with what it has
        if quick is not None and not (with_claims and quick.unresolved and base is None and resume.in_hook()):
            return quick
    if base is None and size:  # a hook reads on for its budget only (store.state.resume)
        return resume.read_on(layout, progress, (lambda whole: _save_if_current(layout, whole)) if save else None)
    loaded = _caught_up(layout, base)
    if loaded.changed and save:
        _save_if_current(layout, loaded)
    return loaded


def _quick_allowed(layout: Layout) -> bool:
    """Quick reads need someone to finish the snapshot: a background process, or nobody when the
    folder cannot be written anyway (then every reader reads quickly)."""
    from store.state import background

    return background.available() or not os.access(str(layout.root), os.W_OK)


def _caught_up(layout: Layout, base: Optional[Snapshot]) -> Loaded:
    if base is not None:
        before = base.offset
        try:
            torn = snapshot.catch_up(base, layout.file(LEDGER), before)
            return Loaded(base, torn, base.offset != before)
        except LedgerError:
            pass
    return snapshot.rebuild(layout.file(LEDGER))


def _save_if_current(layout: Layout, loaded: Loaded) -> bool:
    """Save the snapshot just built unless a writer moved the ledger on meanwhile; True when saved."""
    from store.base import durable
    from store.state import once_keys

    try:
        with durable.locked(layout.file(LOCK)):
            if snapshot.ledger_size(layout.file(LEDGER)) == loaded.snapshot.offset + loaded.torn:
                once_keys.flush(layout, loaded.snapshot)
                durable.atomic_write(layout.file(SNAPSHOT), loaded.snapshot.to_bytes(), sync=False)
                return True
    except OSError:
        pass  # a read-only or full store still answers; the snapshot is only a cache
    return False


def repair_tail(layout: Layout, warnings: List[str]) -> Optional[Dict[str, Any]]:
    """Make the ledger end on a complete line; return its last record (None when empty). The torn
    bytes go to torn.log when it can be written; on a full or read-only disk they are dropped
    (a torn line was never acknowledged) and a warning says so."""
    from store.base import durable

    try:
        tail = read_tail(layout.file(LEDGER))
    except LedgerError as exc:
        raise BatonError(f"{layout.file(LEDGER)}: the last line is not a valid record ({exc}); {REPAIR_HINT}",
                         CHECK) from None
    if not tail.torn:
        return tail.last
    try:  # killed just before the newline: the record itself is whole
        record = parse_line(tail.torn)
        check_link(record, tail.last)
        durable.append_line(layout.file(LEDGER), b"\n", sync=fsync_enabled())
        return record
    except LedgerError:
        pass
    entry = {"ts": now_iso(), "offset": tail.complete_size, "bytes": tail.torn.decode("latin-1")}
    try:
        durable.append_line(layout.file(TORN), jsonc.dumps(entry).encode("ascii") + b"\n", sync=False)
    except OSError as exc:
        if not unwritable(exc):
            raise
        warnings.append(f"a torn line ({len(tail.torn)} bytes left by a killed writer, never acknowledged) "
                        f"was dropped without a copy: {describe(exc, layout.file(TORN))}")
    os.truncate(layout.file(LEDGER), tail.complete_size)
    return tail.last


def fields(snap: Snapshot, step: str, status: str, note: str, extra: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields of a new record (all but seq, prev and hash) on the state ``snap``."""
    from store.state import attempts

    return {"ts": now_iso(), "step": step, "status": status, "note": cap_note(note),
            "session": os.environ.get("CLAUDE_CODE_SESSION_ID", ""), "attempt": attempts.number(snap, step, status),
            **extra}


def commit(layout: Layout, step: str, status: str, note: str = "", extra: Optional[Mapping[str, Any]] = None,
           steps: Optional[Sequence[str]] = None, retry_check: bool = True, sync: Optional[bool] = None,
           guard: Optional[Callable[[Snapshot], None]] = None, with_claims: bool = False) -> Committed:
    """Append one record (unless it is a retry); the caller has validated ``step`` and ``status``.
    ``with_claims`` (a parallel plan's record): the state returned holds exact claims too.
    ``steps``: the plan's steps, for the state returned; a ledger far ahead of its snapshot is then
    read quickly for them (for ``step`` alone when not given) and rebuilt aside. ``sync`` overrides
    ``BATON_FSYNC`` (``baton once`` always makes its records durable); ``guard`` sees the whole
    current state inside the lock (a database's transaction) and may raise to append nothing. With
    a database that cannot be reached, a record without a guard is queued in the clone."""
    chosen: Chosen = (step, status, note, dict(extra or {}))

    def choose(snap: Snapshot) -> Chosen:
        if guard is not None:
            guard(snap)
        return chosen

    wanted = steps if steps is not None else [step]
    done = commit_if(layout, choose, steps=wanted, whole=guard is not None, retry_check=retry_check, sync=sync,
                     queue=chosen if guard is None else None,
                     claims_of=wanted if with_claims and guard is None else None)
    assert done is not None, "a record known in advance is always appended (or found as a retry)"
    return done


def commit_if(layout: Layout, choose: Callable[[Snapshot], Optional[Chosen]], steps: Optional[Sequence[str]] = None,
              whole: bool = True, retry_check: bool = True, sync: Optional[bool] = None,
              queue: Optional[Chosen] = None, take: Optional[Take] = None,
              claims_of: Optional[Sequence[str]] = None) -> Optional[Committed]:
    """Append the record ``choose(state)`` names under the ledger's lock, ``None`` when it names
    none. ``whole``: ``choose`` judges the whole state, never a quick partial one, unless it judges
    only the plan steps ``claims_of`` and their claims (a parallel plan's claim): a ledger far ahead
    of its snapshot is then read from its end when that is exact for them (``store.state.coldclaims``;
    every step found, the claims settled), so a fresh clone's first claim does not replay it all. With a database,
    ``take`` makes it a claim the database decides (see :class:`Take`), and ``queue`` is the record
    kept in the clone's queue while the server cannot be reached (none: a clear error instead)."""
    remote = shared()
    if remote is not None:
        done = remote.commit(layout, choose, fields, retry_check, queue, take)
        return Committed(*done) if done is not None else None
    from store.base import durable
    from store.state import attempts

    warnings: List[str] = []
    try:
        os.makedirs(layout.state_dir, exist_ok=True)
        with durable.locked(layout.file(LOCK)):
            last = repair_tail(layout, warnings)
            loaded = _state_to_judge(layout, steps, whole, claims_of)
            snap = loaded.snapshot
            if last is not None and snap.seq != last["seq"]:
                loaded = snapshot.rebuild(layout.file(LEDGER))
                snap = loaded.snapshot
            picked = choose(snap)
            if picked is None:
                return None
            new = fields(snap, *picked)
            earlier = attempts.retry_of(snap, new) if retry_check else None
            if earlier is not None:
                return Committed(earlier, loaded, True, warnings)
            seq, prev = (last["seq"] + 1, last["hash"]) if last else (1, GENESIS)
            record = seal(new, seq, prev)
            line = format_line(record)
            end = durable.append_line(layout.file(LEDGER), line, sync=fsync_enabled() if sync is None else sync,
                                      rollback=True)
            # committed: nothing below may turn this into a failure
            snap.apply(record, end, end - len(line))
            snap.mark_end(line)
            if not loaded.partial:
                _save_after_append(layout, snap, warnings)
    except OSError as exc:
        if take is not None:  # a claim: what was refused is a claim, not the caller's record
            raise BatonError(f"cannot claim: {describe(exc, layout.file(LEDGER))}; no step was claimed",
                             USAGE) from None
        raise BatonError(f"cannot record: {describe(exc, layout.file(LEDGER))}; nothing was recorded", USAGE) from None
    return Committed(record, Loaded(snap, 0, False, loaded.partial, loaded.unresolved), False, warnings)


def _state_to_judge(layout: Layout, steps: Optional[Sequence[str]], whole: bool,
                    claims_of: Optional[Sequence[str]]) -> Loaded:
    if not whole or claims_of is not None:
        loaded = read_state(layout, save=False, steps=claims_of or steps, with_claims=claims_of is not None)
        if loaded.reading:  # a hook that has not finished reading the ledger judges nothing on a part of it
            raise BatonError("baton has not finished reading this job's long ledger, so nothing was recorded; "
                             "it reads on at each hook call", USAGE)
        if not (whole and loaded.unresolved):  # a step the quick read had no time to find: not exact
            return loaded
    return _caught_up(layout, snapshot.read_saved(layout.file(SNAPSHOT), layout.file(LEDGER)))


def _save_after_append(layout: Layout, snap: Snapshot, warnings: List[str]) -> None:
    from store.base import durable
    from store.state import once_keys

    try:
        once_keys.flush(layout, snap)
        durable.atomic_write(layout.file(SNAPSHOT), snap.to_bytes(), sync=False)
    except Exception as exc:  # noqa: BLE001 - the record is committed; the snapshot is only a cache
        cause = describe(exc, layout.file(SNAPSHOT)) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
        warnings.append(f"recorded, but the snapshot could not be saved ({cause}); it is rebuilt from the "
                        "ledger on the next read")


def append(layout: Layout, step: str, status: str, note: str = "", sync: Optional[bool] = None,
           guard: Optional[Callable[[Snapshot], None]] = None, **extra: Any) -> Dict[str, Any]:
    """Append one record and return it (see :func:`commit`, which also returns its warnings)."""
    return commit(layout, step, status, note, extra, sync=sync, guard=guard).record


def append_if(layout: Layout, choose: Callable[[Snapshot], Optional[Chosen]],
              take: Optional[Take] = None, claims_of: Optional[Sequence[str]] = None) -> Optional[Dict[str, Any]]:
    """The record ``choose(whole state)`` names, appended (``None`` when it names none); see
    :func:`commit_if`. Never a retry and never queued: what it appends depends on the state."""
    done = commit_if(layout, choose, retry_check=False, take=take, claims_of=claims_of)
    return done.record if done is not None else None


def last_records(layout: Layout, count: int, notes: Optional[List[str]] = None) -> Tuple[List[Dict[str, Any]], bytes]:
    """The last ``count`` records, oldest first, and the torn tail (always empty in a database);
    with a database that cannot be reached, the clone's copy of them and a note in ``notes``."""
    remote = shared()
    if remote is not None:
        return remote.last_records(layout, count, notes), b""
    return read_last(layout.ledger, count)


def verify(layout: Layout) -> Verdict:
    """Walk the whole ledger (or the database's records) and name the first bad line."""
    from store.ledger import chain

    remote = shared()
    return chain.verify_lines(remote.lines(layout)) if remote is not None else chain.verify(layout.ledger)


def verify_lines(lines: Iterator[Tuple[int, bytes, bool]]) -> Verdict:
    """Walk ``(offset, line, complete)`` in order and name the first bad line (``store push`` and
    ``pull`` check both sides with it)."""
    from store.ledger import chain

    return chain.verify_lines(lines)
