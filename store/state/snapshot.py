"""The derived snapshot ``state.json``: what ``brief`` and ``status`` need, without the ledger.

It holds each step's latest status and attempt, the last record, recent sessions, approvals and
the ledger offset it has applied up to; for ``baton once`` records (``intent``, ``result``) the
open intents, the latest results and the count of results, while the per-key index lives in
shard files (``store.state.effects``) so that this file stays small however many keys a job
has. Readers stat the ledger and, when it grew, apply only the new bytes; when the snapshot is
missing, unreadable or disagrees with the ledger it is rebuilt from the ledger once. It is never
the source of truth and can be deleted at any time.
"""

from __future__ import annotations

import json
from pathlib import Path

from store.base.values import Value
from store.state.ledger import GENESIS, LedgerError, check_link, format_line, iter_lines, parse_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

VERSION = 2
KEEP_SESSIONS = 20
LAST_KEYS = ("seq", "ts", "step", "status", "note", "session", "attempt")
STEP_STATUSES = ("running", "done", "failed", "skipped")  # system records (stop, limit) leave steps alone
ONCE_STATUSES = ("intent", "result")  # written by `baton once`; they leave steps alone too
KEEP_ONCE_RESULTS = 5  # the latest results, for the brief's ONCE line
OPEN_NOTE = 80  # characters of an open intent's command kept for the brief


class Snapshot(Value):
    __slots__ = ("offset", "seq", "hash", "first_ts", "steps", "last", "sessions", "sessions_total",
                 "approvals", "problems", "progress_seq", "first_hash", "once_open", "once_recent",
                 "once_results", "once_pending", "session_cost_usd")

    def __init__(self, offset: int = 0, seq: int = 0, hash: str = GENESIS, first_ts: str = "",
                 steps: Optional[Dict[str, Dict[str, Any]]] = None, last: Optional[Dict[str, Any]] = None,
                 sessions: Optional[Dict[str, Dict[str, int]]] = None, sessions_total: int = 0,
                 approvals: Optional[Dict[str, Dict[str, Any]]] = None, problems: Optional[List[str]] = None,
                 progress_seq: int = 0, first_hash: str = "", once_open: Optional[Dict[str, Dict[str, Any]]] = None,
                 once_recent: Optional[List[Dict[str, Any]]] = None, once_results: int = 0,
                 once_pending: Optional[Dict[str, List[int]]] = None, session_cost_usd: float = 0.0) -> None:
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

    def apply(self, record: Dict[str, Any], end_offset: int, start: Optional[int] = None) -> None:
        """Fold one record in; ``end_offset`` is the ledger size just after its line, ``start``
        where its line begins (computed from the canonical line when not given)."""
        self.offset, self.seq, self.hash = end_offset, record["seq"], record["hash"]
        self.first_ts = self.first_ts or str(record.get("ts", ""))
        self.first_hash = self.first_hash or str(record["hash"])
        at = start if start is not None else end_offset - len(format_line(record))
        step, status = str(record.get("step", "")), str(record.get("status", ""))
        brief = {k: record.get(k) for k in LAST_KEYS}
        if status == "approved":
            self.approvals[step] = {k: record.get(k) for k in ("seq", "ts", "by", "via", "session", "sig", "scope")}
            self.progress_seq = record["seq"]
        elif status in STEP_STATUSES:
            self.steps[step] = {**{k: v for k, v in brief.items() if k != "step"}, **checkpoint_refs(record, at)}
            self.progress_seq = record["seq"]
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

    def to_bytes(self) -> bytes:
        data = {"version": VERSION, **{k: getattr(self, k) for k in self.__slots__}}
        return json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")

    @classmethod
    def from_bytes(cls, raw: bytes) -> Optional[Snapshot]:
        """Decode a saved snapshot; ``None`` when it is unreadable or from another version."""
        try:
            data = json.loads(raw.decode("ascii"))
            if not isinstance(data, dict) or data.pop("version", None) != VERSION:
                return None
            snap = cls(**data)
        except (ValueError, TypeError, UnicodeDecodeError):
            return None
        shapes = (snap.steps, snap.once_open, snap.once_pending)
        return snap if all(isinstance(v, dict) for v in shapes) and isinstance(snap.offset, int) else None


def key_digest(key: str) -> str:
    """The name of a ``baton once`` key in the index: 32 hex digits of its SHA-256."""
    from hashlib import sha256

    return sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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


class Loaded(Value):
    __slots__ = ("snapshot", "torn", "changed")

    def __init__(self, snapshot: Snapshot, torn: int, changed: bool) -> None:
        self.snapshot = snapshot
        self.torn = torn  # bytes of torn tail skipped (0 when the ledger ends cleanly)
        self.changed = changed  # the snapshot on disk is stale and worth saving


def _catch_up(snap: Snapshot, ledger: Path, start: int) -> int:
    """Apply complete lines from ``start``; return the torn tail's length. Raises on a chain gap."""
    prev: Optional[Dict[str, Any]] = {"seq": snap.seq, "hash": snap.hash} if snap.seq else None
    line_no = None if start else 0
    for offset, raw, complete in iter_lines(ledger, start):
        if not complete:
            return len(raw)
        if line_no is not None:
            line_no += 1
        if not raw.strip():
            continue
        try:
            record = parse_line(raw)
            check_link(record, prev)
        except LedgerError as exc:
            if start:
                raise  # the snapshot no longer matches the ledger: the caller rebuilds
            where = f"line {line_no}" if line_no is not None else f"byte {offset}"
            snap.problems = (snap.problems + [f"{where}: {exc}"])[-5:]
            try:
                record = parse_line(raw)
            except LedgerError:
                snap.offset = offset + len(raw) + 1
                continue
        snap.apply(record, offset + len(raw) + 1, offset)
        prev = record
    return 0


def load(snapshot_path: Path, ledger: Path) -> Loaded:
    """The up-to-date snapshot: saved one plus the ledger's new lines, or rebuilt when needed."""
    try:
        size = ledger.stat().st_size
    except FileNotFoundError:
        size = 0
    try:
        snap = Snapshot.from_bytes(snapshot_path.read_bytes())
    except OSError:
        snap = None
    if snap is not None and snap.offset <= size:
        if snap.offset == size:
            return Loaded(snap, 0, False)
        before = snap.offset
        try:
            torn = _catch_up(snap, ledger, before)
            return Loaded(snap, torn, snap.offset != before)
        except LedgerError:
            pass
    return rebuild(ledger)


def rebuild(ledger: Path) -> Loaded:
    """A snapshot made from the whole ledger: the slow path, taken once when the cache is lost."""
    fresh = Snapshot()
    torn = _catch_up(fresh, ledger, 0)
    return Loaded(fresh, torn, True)
