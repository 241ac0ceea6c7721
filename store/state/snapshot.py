"""The derived snapshot ``state.json``: what ``brief`` and ``status`` need, without the ledger.

It holds each step's latest status and attempt, the last record, recent sessions, approvals, who
holds which step of a parallel plan (``claims``, see ``store.state.claims``), the ledger offset it
has applied up to and the ledger's last bytes before that offset (``end_mark``); for ``baton once``
records (``intent``, ``result``) the open intents, the latest results and the count of results,
while the per-key index lives in shard files (``store.state.once_keys``) so that this file stays
small however many keys a job has. A saved snapshot is trusted only when every field has its type
and the ledger still holds those bytes at that offset; readers then apply only the lines after it.
Anything else (missing, half-written, wrong types, another ledger of any size) is rebuilt from the
ledger, as if missing. It is never the source of truth and can be deleted at any time.
"""

from __future__ import annotations

import os
import time

from store.base import jsonc
from store.base.values import Value
from store.ledger.ledger import GENESIS, LedgerError, check_link, format_line, iter_lines, parse_line
from store.state import claims

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

VERSION = 4  # 2: baton once and session costs; 3: end_mark, checked fields; 4: claims of parallel steps
MARK_BYTES = 64  # the ledger's last bytes kept in ``end_mark``: enough to hold the last record's hash
KEEP_SESSIONS = 20
LAST_KEYS = ("seq", "ts", "step", "status", "note", "session", "attempt")
STEP_STATUSES = ("running", "done", "failed", "skipped")  # system records (stop, limit) leave steps alone
ONCE_STATUSES = ("intent", "result")  # written by `baton once`; they leave steps alone too
KEEP_ONCE_RESULTS = 5  # the latest results, for the brief's ONCE line
OPEN_NOTE = 80  # characters of an open intent's command kept for the brief
SNAP_NOTE = 300  # characters of a step's note kept here, for the brief; the ledger keeps the note whole
BY_SEQ = "checkpoint"  # a database's step: its record has a checkpoint, found by seq (store.state.checkpointed)


class Snapshot(Value):
    __slots__ = ("offset", "seq", "hash", "first_ts", "steps", "last", "sessions", "sessions_total",
                 "approvals", "problems", "progress_seq", "first_hash", "once_open", "once_recent",
                 "once_results", "once_pending", "session_cost_usd", "end_mark", "claims")

    def __init__(self, offset: int = 0, seq: int = 0, hash: str = GENESIS, first_ts: str = "",
                 steps: Optional[Dict[str, Dict[str, Any]]] = None, last: Optional[Dict[str, Any]] = None,
                 sessions: Optional[Dict[str, Dict[str, int]]] = None, sessions_total: int = 0,
                 approvals: Optional[Dict[str, Dict[str, Any]]] = None, problems: Optional[List[str]] = None,
                 progress_seq: int = 0, first_hash: str = "", once_open: Optional[Dict[str, Dict[str, Any]]] = None,
                 once_recent: Optional[List[Dict[str, Any]]] = None, once_results: int = 0,
                 once_pending: Optional[Dict[str, List[int]]] = None, session_cost_usd: float = 0.0,
                 end_mark: str = "", claims: Optional[Dict[str, Dict[str, Any]]] = None) -> None:
        self.offset, self.seq, self.hash, self.first_ts = offset, seq, hash, first_ts
        self.steps: Dict[str, Dict[str, Any]] = {} if steps is None else steps
        self.last = last
        self.sessions: Dict[str, Dict[str, int]] = {} if sessions is None else sessions
        self.sessions_total = sessions_total
        self.approvals: Dict[str, Dict[str, Any]] = {} if approvals is None else approvals
        self.problems: List[str] = [] if problems is None else problems  # corrupt lines seen while applying
        self.progress_seq = progress_seq  # seq of the last step, approval or once record (system records are not)
        self.first_hash = first_hash  # hash of record 1: what names this job in every clone of the ledger
        self.once_open: Dict[str, Dict[str, Any]] = {} if once_open is None else once_open  # key -> intent
        self.once_recent: List[Dict[str, Any]] = [] if once_recent is None else once_recent
        self.once_results = once_results  # results that stand for an operation done (not "retry" settlements)
        # key digest -> [seq, start offset] of its latest once record, not yet written to the shard files
        self.once_pending: Dict[str, List[int]] = {} if once_pending is None else once_pending
        self.session_cost_usd = session_cost_usd  # summed ``cost_usd`` of ``session`` records (baton run, the SDK)
        self.end_mark = end_mark  # hex of the ledger's last MARK_BYTES bytes before offset (see mark_end)
        self.claims: Dict[str, Dict[str, Any]] = {} if claims is None else claims  # step -> who holds it

    def apply(self, record: Dict[str, Any], end_offset: int, start: Optional[int] = None) -> None:
        """Fold one record in; ``end_offset`` is the ledger size just after its line, ``start``
        where its line begins (computed from the canonical line when not given)."""
        self.offset, self.seq, self.hash = end_offset, record["seq"], record["hash"]
        self.first_ts = self.first_ts or str(record.get("ts", ""))
        self.first_hash = self.first_hash or str(record["hash"])
        at = start if start is not None else end_offset - len(format_line(record))
        step, status = str(record.get("step", "")), str(record.get("status", ""))
        brief = {k: record.get(k) for k in LAST_KEYS}
        brief.update(note_view(record.get("note")))
        claims.fold(self.claims, record)
        if status == "approved":
            self.approvals[step] = {k: record.get(k) for k in ("seq", "ts", "by", "via", "session", "sig", "scope",
                                                               "kid")}
            self.progress_seq = record["seq"]
        elif status in STEP_STATUSES:
            if _superseded(self.steps.get(step), record):
                self._count_session(record.get("session"), record["seq"])
                return
            self.steps[step] = {**{k: v for k, v in brief.items() if k != "step"}, **checkpoint_refs(record, at)}
            self.progress_seq = record["seq"]
            if status in claims.ENDS:  # the step's state now: a claim made where it was not known done ends
                self.claims.pop(step, None)
        elif status in ONCE_STATUSES:
            self._fold_once(record, at)
            self.progress_seq = record["seq"]
            self._count_session(record.get("session"), record["seq"])
            return
        else:  # baton's own bookkeeping (stop, limit, session) is not the work LAST reports
            cost = record.get("cost_usd") if status == "session" else None
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and 0 < cost < float("inf"):
                self.session_cost_usd += float(cost)
            self._count_session(record.get("session"), record["seq"])
            return
        self.last = brief
        self._count_session(record.get("session"), record["seq"])

    def _fold_once(self, record: Dict[str, Any], at: int) -> None:
        key = record.get("key")
        if not isinstance(key, str):
            return
        self.once_pending[key_digest(key)] = [record["seq"], at]
        if record.get("status") == "intent":
            self.once_open[key] = {"seq": record["seq"], "ts": record.get("ts"), "step": record.get("step"),
                                   "session": record.get("session"), "note": str(record.get("note") or "")[:OPEN_NOTE]}
            return
        self.once_open.pop(key, None)
        outcome = record.get("outcome")
        if outcome == "retry":
            return
        self.once_results += 1
        entry = {k: record.get(k) for k in ("seq", "ts", "step", "exit", "outcome")}
        entry.update(key=key, id=str(record.get("id") or "")[:OPEN_NOTE])
        self.once_recent = (self.once_recent + [entry])[-KEEP_ONCE_RESULTS:]

    def _count_session(self, session: Any, seq: int) -> None:
        if not isinstance(session, str) or not session:
            return
        seen = self.sessions.get(session)
        if seen is None:
            self.sessions_total += 1
            seen = self.sessions[session] = {"first": seq, "last": seq, "records": 0}
        seen["last"], seen["records"] = seq, seen["records"] + 1
        if len(self.sessions) > KEEP_SESSIONS:
            oldest = min(self.sessions, key=lambda s: self.sessions[s]["last"])
            del self.sessions[oldest]

    def mark_end(self, line: bytes) -> None:
        """Remember the end of the line just applied (with its newline), which ends at ``offset``."""
        self.end_mark = line[-MARK_BYTES:].hex()

    def to_bytes(self) -> bytes:
        data = {"version": VERSION, **{k: getattr(self, k) for k in self.__slots__}}
        return jsonc.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")

    @classmethod
    def from_bytes(cls, raw: bytes) -> Optional[Snapshot]:
        """Decode a saved snapshot; ``None`` when it is unreadable, half-written, from another version,
        or any field fails its check in :data:`CHECKS`."""
        try:
            data = jsonc.loads(raw.decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or data.pop("version", None) != VERSION or set(data) != set(CHECKS):
            return None
        if not all(check(data[name]) for name, check in CHECKS.items()):
            return None
        return cls(**data)


def note_view(note: Any) -> Dict[str, Any]:
    """What the snapshot keeps of a record's note: the note, or, past :data:`SNAP_NOTE` characters,
    its start and a digest of the whole (so a retry is still told from a new note). Every hook
    reads this file, so its size must not follow the length of the notes."""
    if not isinstance(note, str) or len(note) <= SNAP_NOTE:
        return {"note": note}
    from store.ledger.sealing import sha256_maker

    whole = sha256_maker()(note.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return {"note": note[: SNAP_NOTE - 1] + "\u2026", "note_sha": whole}


def key_digest(key: str) -> str:
    """The name of a ``baton once`` key in the index: 32 hex digits of its SHA-256."""
    from store.ledger.sealing import sha256_maker

    return str(sha256_maker()(key.encode("utf-8", "surrogatepass")).hexdigest()[:32])


def checkpoint_refs(record: Dict[str, Any], at: int) -> Dict[str, Any]:
    """What the snapshot keeps of a step record's checkpoint: where the record is (when it carries
    artifacts or an inputs digest, read back by offset) and its git commit, base and patch id."""
    refs: Dict[str, Any] = {}
    revision = record.get("revision")
    revision = revision if isinstance(revision, dict) else {}
    if record.get("artifacts") or revision.get("inputs"):
        refs["at"] = at
    if isinstance(revision.get("commit"), str):
        refs["commit"] = revision["commit"]
    change = record.get("change")
    if isinstance(change, dict):
        refs.update({k: change[k] for k in ("base", "patch_id") if isinstance(change.get(k), str)})
    return refs


def _superseded(current: Optional[Dict[str, Any]], record: Dict[str, Any]) -> bool:
    """A record merged in from another branch does not replace a later record of the same step."""
    return "merged" in record and current is not None and str(current.get("ts", "")) > str(record.get("ts", ""))


def _count(value: Any) -> bool:
    return isinstance(value, int) and value >= 0


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _record_view(value: Any) -> bool:
    """A step's or approval's kept fields, as a record gave them (any JSON value; a status is text)."""
    return isinstance(value, dict) and isinstance(value.get("status", ""), str)


def _map_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    # keys need no check: a JSON object's keys are always strings
    return lambda value: isinstance(value, dict) and all(map(check, value.values()))


def _session_view(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"first", "last", "records"} and all(
        _count(v) for v in value.values())


def _offsets(value: Any) -> bool:
    """A ``baton once`` key's [seq, start offset] in the ledger."""
    return isinstance(value, list) and len(value) == 2 and all(_count(v) and not isinstance(v, bool) for v in value)


def _amount(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def _claim_view(value: Any) -> bool:
    """Who holds a step (``store.state.claims``): worker, claim time, and the one it was taken after."""
    return isinstance(value, dict) and all(_text(value.get(k, "")) for k in ("worker", "ts", "released")) and \
        isinstance(value.get("after", {}), dict)


def _hex(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 2 * MARK_BYTES and len(value) % 2 == 0 and all(
        c in "0123456789abcdef" for c in value)


# One check per saved field. A field added to Snapshot needs its check here, or saved snapshots
# never load (tests/state/test_snapshot.py holds the two lists equal).
CHECKS: Dict[str, Callable[[Any], bool]] = {
    "offset": _count, "seq": _count, "hash": _text, "first_ts": _text,
    "steps": _map_of(_record_view), "last": lambda v: v is None or _record_view(v),
    "sessions": _map_of(_session_view), "sessions_total": _count, "approvals": _map_of(_record_view),
    "problems": lambda v: isinstance(v, list) and all(_text(p) for p in v), "progress_seq": _count,
    "end_mark": _hex, "first_hash": _text,
    "once_open": _map_of(lambda v: isinstance(v, dict)),
    "once_recent": lambda v: isinstance(v, list) and all(isinstance(e, dict) for e in v),
    "once_results": _count, "once_pending": _map_of(_offsets), "session_cost_usd": _amount,
    "claims": _map_of(_claim_view),
}


class Loaded(Value):
    __slots__ = ("snapshot", "torn", "changed", "partial", "unresolved", "reading")

    def __init__(self, snapshot: Snapshot, torn: int, changed: bool, partial: bool = False,
                 unresolved: Sequence[str] = (), reading: Optional[Tuple[int, int, str]] = None) -> None:
        self.snapshot = snapshot
        self.torn = torn  # bytes of torn tail skipped (0 when the ledger ends cleanly)
        self.changed = changed  # the snapshot on disk is stale and worth saving
        # partial: read from the ledger's end for the plan's steps only (see store.state.quickread);
        # exact for those steps, LAST and the chain's end, not for totals; never saved
        self.partial = partial
        self.unresolved = tuple(unresolved)  # plan steps the quick read had no time to look for
        # reading: (bytes replayed, ledger bytes, why the progress was not saved or "") when a hook's replay
        # ran out of time (store.state.resume): the state of the ledger's first bytes only, NEXT not known
        self.reading = reading


def catch_up(snap: Snapshot, ledger: Union[str, Path], start: int) -> int:
    """Apply complete lines from ``start``; return the torn tail's length. From ``start`` > 0 a line
    that does not chain on raises :class:`LedgerError` (the snapshot is not this ledger's); from 0,
    damaged lines are noted in ``problems`` and skipped."""
    return replay(snap, ledger, start, None if start else 0).torn


class Replayed(Value):
    __slots__ = ("torn", "lines", "done")

    def __init__(self, torn: int, lines: Optional[int], done: bool) -> None:
        self.torn = torn  # bytes of torn tail left (0 when the ledger ends cleanly, or when not done)
        self.lines = lines  # lines of the ledger up to ``snap.offset`` (None: not counted, a catch-up)
        self.done = done  # False: the deadline came first, and ``snap`` is the state at ``snap.offset``


CHECK_EVERY = 256  # lines folded between looks at the clock


def replay(snap: Snapshot, ledger: Union[str, Path], start: int, lines: Optional[int] = None,
           deadline: Optional[float] = None) -> Replayed:
    """Fold the complete lines from ``start`` into ``snap``, the one fold every reader uses. With
    ``lines`` (how many lines come before ``start``: a rebuild, from 0 or resumed) damaged lines
    are noted in ``problems`` by line number and skipped; without it a line that does not chain on
    raises :class:`LedgerError`. With ``deadline`` (``time.monotonic()``) it stops at a whole line
    once that time has passed: ``snap`` is then exactly the state at ``snap.offset``, to go on from."""
    prev: Optional[Dict[str, Any]] = {"seq": snap.seq, "hash": snap.hash} if snap.seq else None
    counted = lines  # lines up to snap.offset (blank lines after it are counted again when resumed)
    line_no = lines
    seen = 0
    for offset, raw, complete in iter_lines(ledger, start):
        if not complete:
            return Replayed(len(raw), counted, True)
        seen += 1
        if deadline is not None and seen % CHECK_EVERY == 0 and time.monotonic() >= deadline:
            return Replayed(0, counted, False)
        if line_no is not None:
            line_no += 1
        if not raw.strip():
            continue
        try:
            record = parse_line(raw)
            check_link(record, prev)
        except LedgerError as exc:
            if line_no is None:
                raise  # the snapshot no longer matches the ledger: the caller rebuilds
            snap.problems = (snap.problems + [f"line {line_no}: {exc}"])[-5:]
            try:
                record = parse_line(raw)
            except LedgerError:
                snap.offset = offset + len(raw) + 1
                snap.mark_end(raw + b"\n")
                counted = line_no
                continue
        snap.apply(record, offset + len(raw) + 1, offset)
        snap.mark_end(raw + b"\n")
        counted = line_no
        prev = record
    return Replayed(0, counted, True)


def matches(snap: Snapshot, ledger: Union[str, Path]) -> bool:
    """True when the ledger still holds the snapshot's ``end_mark`` bytes just before its offset
    (one small read: a ledger replaced by another one, even of the same size, fails)."""
    if not snap.offset:
        return not snap.end_mark
    mark = bytes.fromhex(snap.end_mark)
    try:
        fd = os.open(str(ledger), os.O_RDONLY)
    except OSError:
        return False
    try:
        return bool(mark) and os.fstat(fd).st_size >= snap.offset and \
            os.pread(fd, len(mark), snap.offset - len(mark)) == mark
    finally:
        os.close(fd)


def read_saved(snapshot_path: Union[str, Path], ledger: Union[str, Path]) -> Optional[Snapshot]:
    """The saved snapshot when it validates and :func:`matches` the ledger; ``None`` otherwise."""
    try:
        with open(snapshot_path, "rb") as handle:
            snap = Snapshot.from_bytes(handle.read())
    except OSError:
        return None
    return snap if snap is not None and matches(snap, ledger) else None


def ledger_size(ledger: Union[str, Path]) -> int:
    try:
        return os.stat(ledger).st_size
    except FileNotFoundError:
        return 0


def load(snapshot_path: Union[str, Path], ledger: Union[str, Path]) -> Loaded:
    """The up-to-date snapshot: saved one plus the ledger's new lines, or rebuilt when needed."""
    snap = read_saved(snapshot_path, ledger)
    if snap is not None:
        size = ledger_size(ledger)
        if snap.offset == size:
            return Loaded(snap, 0, False)
        before = snap.offset
        try:
            torn = catch_up(snap, ledger, before)
            return Loaded(snap, torn, snap.offset != before)
        except LedgerError:
            pass
    return rebuild(ledger)


def rebuild(ledger: Union[str, Path]) -> Loaded:
    """A snapshot made from the whole ledger: the slow path, taken once when the cache is lost."""
    fresh = Snapshot()
    torn = catch_up(fresh, ledger, 0)
    return Loaded(fresh, torn, True)
