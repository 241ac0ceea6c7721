"""The ``done`` record of each DONE step whose checkpoint the snapshot marks (for CHANGED and
STALE): found by its byte offset in ``steps.jsonl`` (``at``), or, for a job kept in a database,
by its seq (the snapshot marks it with :data:`BY_SEQ`), every marked step's in one query.
"""

from __future__ import annotations

from store.ledger.ledger import LedgerError, parse_line, read_at
from store.state.snapshot import BY_SEQ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence

    from store.state.location import Layout
    from store.state.snapshot import Snapshot


def marked(info: Dict[str, Any]) -> bool:
    """Whether a step's entry in the snapshot says its latest record carries a checkpoint
    (artifacts or an inputs digest)."""
    return isinstance(info.get("at"), int) or info.get(BY_SEQ) is True


class DoneRecords:
    """The records of ``steps``, each read when first asked for: one read of the file per step,
    or one query for all of them to the job's database, within this process's time for it
    (``store.backend.budget``); a database that cannot be reached raises ``Unreachable``, a
    :class:`BatonError`."""

    def __init__(self, layout: Layout, snap: Snapshot, steps: Sequence[str], every_done: bool = False) -> None:
        self.layout, self.snap, self.steps = layout, snap, steps
        self._lines: Optional[Dict[int, str]] = None
        # a database's snapshot saved by a baton before the mark has none: with ``every_done`` (no
        # deadline: ``verify --artifacts``) every DONE step's record is read, marked or not
        self._every = every_done and _in_database()

    def _info(self, step: str) -> Dict[str, Any]:
        info = self.snap.steps.get(step) or {}
        wanted = marked(info) or (self._every and isinstance(info.get("seq"), int))
        return info if info.get("status") == "done" and wanted else {}

    def get(self, step: str) -> Optional[Dict[str, Any]]:
        """``step``'s checkpointed ``done`` record; ``None`` when it has none, or when the record
        found there is not the one the snapshot names (the next rebuild of the snapshot fixes it)."""
        info = self._info(step)
        if not info:
            return None
        record = read_at(self.layout.ledger, info["at"]) if isinstance(info.get("at"), int) else \
            self._by_seq(info.get("seq"))
        if record is None or record.get("seq") != info.get("seq") or record.get("step") != step:
            return None
        return record

    def _by_seq(self, seq: Any) -> Optional[Dict[str, Any]]:
        if self._lines is None:
            from store.state import remote

            seqs = [info["seq"] for info in map(self._info, self.steps) if isinstance(info.get("seq"), int)]
            self._lines = remote.open_job(self.layout).lines_at(seqs)
        line = self._lines.get(seq) if isinstance(seq, int) else None
        if line is None:
            return None
        try:
            return parse_line(line.encode("ascii", "replace"))
        except LedgerError:
            return None


def _in_database() -> bool:
    from store.state import journal

    return journal.shared() is not None
