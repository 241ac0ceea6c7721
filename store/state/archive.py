"""Starting a new job where one was: the old job's files move, whole, into ``.baton/archive/NAME/``.

NAME is the UTC time and the old job's id (``20261130T104512Z-migrate-api``). The archive holds
the old plan and ledger with everything derived from them, so the new job starts with a clean
ledger and nothing of the old one is lost; its chain is walked before the move and reported, and
``BATON_DIR=.baton/archive/NAME baton verify`` checks it again at any time.
"""

from __future__ import annotations

import os
import re
import time

from store.base import durable
from store.base.values import Frozen
from store.state import journal
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict

FOLDER = "archive"
# Everything one job owns (lock files stay: other processes may hold them).
JOB_FILES = ("plan.json", "steps.jsonl", "state.json", "events.jsonl", "events.jsonl.1", "counters.json",
             "errors.log", "errors.log.1", "degraded.json", "torn.log", "seen.json")


class Archived(Frozen):
    """Where the old job went, and what its ledger held when it was moved."""

    __slots__ = ("folder", "records", "last_hash", "problem")

    def __init__(self, folder: Path, records: int, last_hash: str, problem: str) -> None:
        self.folder, self.records, self.last_hash, self.problem = folder, records, last_hash, problem

    def as_json(self) -> Dict[str, Any]:
        return {"folder": str(self.folder), "records": self.records, "last_hash": self.last_hash,
                "problem": self.problem or None}

    def describe(self, shown: str) -> str:
        chain = f"chain broken ({self.problem})" if self.problem else f"chain intact, last hash {self.last_hash[:12]}"
        return (f"the old job ({self.records} records, {chain}) is archived in {shown}/; "
                f"check it with `BATON_DIR={shown} baton verify`")


def _name(layout: Layout, job: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", job).strip("-.")[:40] or "job"
    name, n = f"{stamp}-{label}", 1
    while (layout.root / FOLDER / name).exists():
        n += 1
        name = f"{stamp}-{label}-{n}"
    return name


def archive_job(layout: Layout, job: str) -> Archived:
    """Move the current job's files into a new archive folder, holding the ledger's lock so no
    record lands between the walk and the move."""
    with durable.locked(layout.lock):
        verdict = journal.verify(layout)
        folder = layout.root / FOLDER / _name(layout, job)
        folder.mkdir(parents=True)
        for name in JOB_FILES:
            source = layout.root / name
            if source.exists():
                os.replace(source, folder / name)
    return Archived(folder, verdict.records, verdict.last_hash, verdict.problem)
