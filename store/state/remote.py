"""A job whose records are kept in a database: its state (from the clone's recent copy on the
hooks' hot path), appends (queued while the server is unreachable, replayed in order when it is
back), claims, and the chain for ``verify``.

The records are sealed and the snapshot folded here, exactly as for ``steps.jsonl``, and handed
to ``store.backend.postgres`` as lines; so a record has the same bytes and hash in either store.
Hooks that only read may answer from the clone's copy (``store.state.mirror``); every other
reader, and every writer, asks the server. Every write comes through ``journal.commit_if``, as
the file store's do: the transaction's commit is the commit point, a retry adds nothing, a guard
judges the state in the transaction, and nothing after the commit turns it into a failure.

A record's place in a database is its ``seq``, not a byte offset: the ``baton once`` index,
which the file store finds by offset in ``steps.jsonl``, is left out of these snapshots, so
``baton once`` refuses to run here; a checkpoint's record is marked and read by its seq
(``store.state.checkpointed``), so CHANGED and STALE work as in files (docs/postgresql.md).
"""

from __future__ import annotations

import os
import time

from store.backend import choice
from store.backend.driver import Unreachable
from store.backend.local import Local, new_id
from store.backend.postgres import Built, Head, SharedJob
from store.base import jsonc
from store.base.errors import USAGE, BatonError, describe
from store.ledger.ledger import LedgerError, canonical, check_link, parse_line, seal
from store.state import attempts, claims, mirror
from store.state.mirror import fold
from store.state.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple

    from store.state.location import Layout
    from store.state.snapshot import Loaded

    Chosen = Tuple[str, str, str, Dict[str, Any]]
    Fields = Callable[[Snapshot, str, str, str, Mapping[str, Any]], Dict[str, Any]]
    Choose = Callable[[Snapshot], Optional[Chosen]]
    Committed = Tuple[Dict[str, Any], Loaded, bool, List[str]]  # journal.Committed's fields

    class Take(Protocol):  # journal.Take
        worker: str
        lease_seconds: float
        names: Callable[[Snapshot], Sequence[str]]
        pick: Callable[[Snapshot, str], Optional[Chosen]]


def job_name(layout: Layout, override: str = "") -> str:
    """The job's name in the database: ``override``, else ``BATON_JOB``, else the plan's ``job``."""
    name = override.strip() or (os.environ.get("BATON_JOB") or "").strip()
    if name:
        return name
    try:
        data = jsonc.loads(layout.plan.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    found = data.get("job") if isinstance(data, dict) else None
    if not isinstance(found, str) or not found.strip():
        raise BatonError(f"{layout.plan}: with the job kept in a database, the plan needs a \"job\" id (the name "
                         "every clone shares), or set BATON_JOB", USAGE)
    return found.strip()


def _database() -> choice.Database:
    database = choice.selected(os.environ)
    assert database is not None, "remote is used only when a database is selected"
    return database


def open_job(layout: Layout) -> SharedJob:
    return SharedJob(_database().conninfo, job_name(layout))


# ------------------------------------------------------------------ building records


def snapshot_of(job: SharedJob, head: Head) -> Snapshot:
    """The snapshot at ``head``: the stored one when it matches the chain's end, else rebuilt."""
    stored = stored_snapshot(head)
    return stored if stored is not None else rebuild(job, head)


def stored_snapshot(head: Head) -> Optional[Snapshot]:
    """The snapshot the database keeps with ``head``, when it is readable and matches it."""
    if not head.snapshot:
        return None if head.seq else Snapshot()
    snap = Snapshot.from_bytes(head.snapshot.encode("ascii", "replace"))
    return snap if snap is not None and (snap.seq, snap.hash) == (head.seq, head.hash) else None


def rebuild(job: SharedJob, head: Head) -> Snapshot:
    """A snapshot made from the records up to ``head`` (the slow path, once per lost snapshot)."""
    snap = Snapshot()
    prev: Optional[Dict[str, Any]] = None
    for seq, line in job.lines(0, head.seq):
        try:
            record = parse_line(line.encode("ascii"))
            check_link(record, prev)
        except (LedgerError, UnicodeEncodeError) as exc:
            snap.problems = (snap.problems + [f"record {seq}: {exc}"])[-5:]
            continue
        fold(snap, record)
        prev = record
    return snap


def _built(snap: Snapshot, head: Head, fields: Dict[str, Any]) -> Built:
    record = seal(fields, head.seq + 1, head.hash)
    fold(snap, record)
    return Built(canonical(record).decode("ascii"), record["seq"], record["hash"], str(record.get("step", "")),
                 str(record.get("status", "")), str(record.get("worker") or ""), snap.to_bytes().decode("ascii"))


def _record(built: Built) -> Dict[str, Any]:
    record: Dict[str, Any] = jsonc.loads(built.line)
    return record


# ------------------------------------------------------------------ reading


def read_state(layout: Layout, worker: str, fresh: bool, make_fields: Fields) -> mirror.SharedLoaded:
    """The job's state; with ``fresh`` false a recent local copy will do (the hooks' hot path)."""
    local = Local(layout.root)
    name = job_name(layout)
    cache = local.read_cache()
    if cache.get("job") != name:
        cache = {}
    if not fresh and mirror.current(cache) and not local.has_queue() and mirror.copy_will_do(layout, cache, worker):
        return mirror.from_copy(cache, local)
    job = SharedJob(_database().conninfo, name)
    try:
        replay(layout, job, local, make_fields)
        head = job.head()
        snap = stored_snapshot(head)
        if snap is None:
            snap = rebuild(job, head)
            job.save_snapshot(head, snap.to_bytes().decode("ascii"))
        if worker and claims.held_by(snap.claims, worker):
            job.renew(worker)
        cache = mirror.fetched(name, snap, job, head.now)
    except Unreachable as exc:
        cache = local.note_failure(cache or {"job": name}, exc.cause)
        return mirror.from_copy(cache, local)
    local.write_cache(cache)
    return mirror.from_copy(cache, local)


def lines(layout: Layout) -> Iterator[Tuple[int, bytes, bool]]:
    """The records as ``verify`` walks them: ``(seq, line, complete)``."""
    for seq, line in open_job(layout).lines():
        yield seq, line.encode("ascii", "replace"), True


def last_records(layout: Layout, count: int, notes: Optional[List[str]] = None) -> List[Dict[str, Any]]:
    """The last ``count`` records; while the server cannot be reached, those the clone's copy holds
    (its last ``mirror.RECENT`` and the queued ones), with a note in ``notes`` saying as of when."""
    if count <= 0:
        return []
    try:
        lines = open_job(layout).last_lines(count)
    except Unreachable as exc:
        return _copy_records(layout, count, exc.cause, notes)
    return _parsed(lines)


def _parsed(lines: Sequence[str]) -> List[Dict[str, Any]]:
    out = []
    for line in lines:
        try:
            out.append(parse_line(line.encode("ascii", "replace")))
        except LedgerError:
            continue
    return out


def _copy_records(layout: Layout, count: int, cause: str, notes: Optional[List[str]]) -> List[Dict[str, Any]]:
    from store.backend.local import when

    local = Local(layout.root)
    cache = local.read_cache()
    if cache.get("job") != job_name(layout):
        cache = {}
    local.note_failure(cache or {"job": job_name(layout)}, cause)
    records = _parsed([line for line in cache.get("recent", []) if isinstance(line, str)])
    end = int(records[-1]["seq"]) if records else 0
    for number, entry in enumerate(local.queued(), 1):  # acknowledged: shown as the copy's view shows them
        records.append({"seq": end + number, "ts": entry["extra"].get("ts", ""), "step": entry["step"],
                        "status": entry["status"], "note": entry["note"], "queued": True, **entry["extra"]})
    if notes is not None:
        notes.append(f"the job's database cannot be reached ({cause}): these are the clone's copy of its last "
                     f"{mirror.RECENT} records as of {when(float(cache.get('fetched') or 0))}"
                     ", with the queued ones (marked queued) after them")
    return records[-count:]


# ------------------------------------------------------------------ writing


def commit(layout: Layout, choose: Choose, make_fields: Fields, retry_check: bool, queue: Optional[Chosen],
           take: Optional[Take]) -> Optional[Committed]:
    """``journal.commit_if`` for a job in the database: the record ``choose`` names on the state in
    the transaction, appended after any queued ones (see the journal for the arguments), timed by
    the server's clock. While the server is unreachable, ``queue`` (a record that judges nothing)
    is kept in the clone's queue and returned with ``queued: True`` (a retry of what the clone
    knows is answered as one, and nothing is queued); anything else is a clear error.
    Returns what ``journal.Committed`` holds: the record, the state, whether it was a retry, warnings."""
    local = Local(layout.root)
    job = open_job(layout)
    if take is not None:
        return _claim(layout, job, local, take, make_fields)
    frozen = _frozen(queue, local) if queue is not None else None  # the same record now or when replayed
    write_id, earlier = new_id(), []

    def make(head: Head) -> Optional[Built]:
        snap = snapshot_of(job, head)
        picked = choose(snap)  # a guard judges the state locked in this transaction
        if picked is None:
            return None
        new = _timed(make_fields(snap, *(frozen or picked)), head)
        found = attempts.retry_of(snap, new, head.now or None) if retry_check else None
        if found is not None:
            earlier.append((found, snap))
            return None
        return _built(snap, head, new)

    try:
        replay(layout, job, local, make_fields)
        step = frozen[0] if frozen is not None else ""
        built = job.append(step, make, write_id, claim_row=frozen is not None and _touches_claim(frozen[1]))
    except Unreachable as exc:
        if frozen is None:
            outcome = ("it may have been written as the connection was lost: `baton log -n 3` shows which once the "
                       "database is back" if exc.unknown else "nothing was recorded")
            raise BatonError(f"cannot record: {exc}; {outcome} (this record is checked against the job's state, "
                             "so it is not queued)", exc.code) from None
        return _queued(local, job, frozen, write_id, exc.cause, make_fields, retry_check)
    if built is None:
        if earlier:
            found, snap = earlier[0]
            return found, mirror.SharedLoaded(snap, [], "", 0, 0.0), True, []
        return None
    # committed: nothing below may turn this into a failure
    warnings = _after_commit(local, job, built)
    return _record(built), mirror.from_copy(local.read_cache(), local), False, warnings


def _timed(fields: Dict[str, Any], head: Head) -> Dict[str, Any]:
    """``fields`` with the time of the server's clock read in the transaction (when it was read)."""
    if head.now:
        fields["ts"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(head.now))
    return fields


def _frozen(chosen: Chosen, local: Local) -> Chosen:
    """The record as it is queued, if it must be: its time is the server's clock as this clone last
    measured it against its own (``skew``), so a retry is judged on one clock when it is replayed."""
    step, status, note, extra = chosen
    skew = float(local.read_cache().get("skew") or 0.0)
    ts = extra.get("ts") or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + skew))
    return step, status, note, {"ts": ts, "session": os.environ.get("CLAUDE_CODE_SESSION_ID", ""), **extra}


def _queued(local: Local, job: SharedJob, frozen: Chosen, write_id: str, cause: str, make_fields: Fields,
            retry_check: bool) -> Committed:
    """Keep ``frozen`` in the clone's queue (acknowledged once it is there, fsynced); its write id
    lets a replay find it when the lost answer was a commit after all, so it is written once. A
    retry of what the clone's copy holds (its records and those queued) is not kept again."""
    step, status, note, extra = frozen
    cache = local.note_failure(local.read_cache() or {"job": job.name}, cause)
    warning = (f"the job's database cannot be reached ({cause}): the record is kept in {local.queue_path} and "
               "written, in order, when it is back")
    if retry_check and cache.get("job") == job.name:
        copy = mirror.from_copy(cache, local)
        found = attempts.retry_of(copy.snapshot, make_fields(copy.snapshot, *frozen), attempts.epoch(extra["ts"]))
        if found is not None:  # queued records are folded in after the copy's own: seq beyond its end
            queued = int(found.get("seq") or 0) > copy.snapshot.seq - copy.queued
            return dict(found, queued=True) if queued else found, copy, True, [warning] if queued else []
    entry: Dict[str, Any] = {"id": write_id, "job": job.name, "step": step, "status": status, "note": note,
                             "extra": extra, "retry_check": retry_check}
    try:
        local.enqueue(entry)
    except OSError as exc:
        raise BatonError(f"cannot record: the job's database cannot be reached ({cause}) and the local queue "
                         f"cannot be written: {describe(exc, local.queue_path)}; nothing was recorded", USAGE) from None
    record = {"step": step, "status": status, "note": note, "seq": 0, "attempt": 0, "queued": True, **extra}
    return record, mirror.from_copy(cache, local), False, [warning]


def _after_commit(local: Local, job: SharedJob, built: Built) -> List[str]:
    try:
        mirror.after_write(local, job, built)
    except Exception as exc:  # noqa: BLE001 - the record is committed; the copy is only a cache
        return [f"recorded, but the clone's copy could not be updated ({type(exc).__name__}: {exc}); it is read "
                "again from the database on the next read"]
    return []


def replay(layout: Layout, job: SharedJob, local: Local, make_fields: Fields) -> int:
    """Write the queued records, oldest first, each once (and a retry of what the database holds
    by then, judged at the time it was asked, not at all); return how many left the queue."""
    if not local.has_queue():
        return 0
    with local.locked():
        entries = local.queued()
        written = 0
        try:
            for entry in entries:
                if entry.get("job") != job.name:
                    written += 1  # queued for another job (BATON_JOB changed): kept out of this one
                    continue
                chosen = (str(entry["step"]), str(entry["status"]), str(entry["note"]), dict(entry["extra"]))
                check = entry.get("retry_check", True) is not False
                built = job.append(chosen[0], _replayed(job, chosen, make_fields, check), str(entry["id"]),
                                   _touches_claim(chosen[1]))
                written += 1
                if built is not None:  # the copy shows it once it leaves the queue, even if the next read fails
                    _after_commit(local, job, built)
        finally:
            if written:
                local.drop(written)
    return written


def _replayed(job: SharedJob, chosen: Chosen, make_fields: Fields, retry_check: bool) -> Callable[[Head],
                                                                                                   Optional[Built]]:
    def make(head: Head) -> Optional[Built]:
        snap = snapshot_of(job, head)
        new = make_fields(snap, *chosen)
        if retry_check and attempts.retry_of(snap, new, attempts.epoch(new.get("ts"))) is not None:
            return None  # the caller retried a record whose answer it never saw: it is there already
        return _built(snap, head, new)

    return make


def renew(layout: Layout, worker: str) -> None:
    """Mark ``worker`` active in the database now (the hooks call it at most every FRESH_SECONDS)."""
    open_job(layout).renew(worker)


def _claim(layout: Layout, job: SharedJob, local: Local, take: Take, make_fields: Fields) -> Optional[Committed]:
    """Claim the first of ``take.names(snapshot)`` nobody live holds, taken with SKIP LOCKED; the
    record ``take.pick`` names for it (``None``: the step is no longer claimable) is appended in
    the same transaction. Claims are never queued: without the server nothing can be claimed
    (:class:`Unreachable`, a clear error)."""
    replay(layout, job, local, make_fields)
    lost: List[bool] = []
    for _ in range(10):  # the snapshot may move between reading it and locking the row: try again
        snap = snapshot_of(job, job.head())
        names = list(take.names(snap))
        if not names:
            return None
        lost.clear()

        def make(head: Head, step: str) -> Optional[Built]:
            locked = snapshot_of(job, head)
            picked = take.pick(locked, step)
            if picked is None:
                lost.append(True)
                return None
            return _built(locked, head, _timed(make_fields(locked, *picked), head))

        try:
            built = job.claim(take.worker, names, take.lease_seconds, make, new_id(), _holders(snap, names))
        except Unreachable as exc:
            if not exc.unknown:
                raise
            raise BatonError(f"the job's database cannot be reached ({exc.cause}) and the connection was lost as "
                             f"worker {take.worker}'s claim committed: it may or may not hold a step now; "
                             "`baton claim` says which once the database is back", exc.code) from None
        if built is not None:
            warnings = _after_commit(local, job, built)
            return _record(built), mirror.from_copy(local.read_cache(), local), False, warnings
        if not lost:
            return None
    return None


def _holders(snap: Snapshot, names: Sequence[str]) -> Dict[str, Tuple[str, int]]:
    """Who the records say holds each of ``names`` (for a step the database has no claim row of)."""
    held = {}
    for name in names:
        worker = claims.holder(snap.claims, name)
        if worker:
            held[name] = (worker, int(snap.claims[name].get("seq") or 0))
    return held


def _touches_claim(status: str) -> bool:
    return status in claims.SYSTEM or status in claims.ENDS

