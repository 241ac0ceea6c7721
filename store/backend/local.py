"""What one clone keeps of a job stored in a database, in its own ``.baton/``: the state it last
read (``shared.json``, so hooks need not ask the server on every tool call) and the records it
could not write while the server was unreachable (``queue.jsonl``, replayed in order).

Both are local to the clone and never committed. The queue is appended under a lock, one whole
line per record, fsynced; each entry carries an id that the database remembers once written, so
a replay after a crash writes nothing twice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from store.base import durable, jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

CACHE = "shared.json"
QUEUE = "queue.jsonl"
QUEUE_LOCK = "queue.lock"


class Local:
    """The local files of a shared job, under ``root`` (the clone's ``.baton`` folder)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.cache_path = self.root / CACHE
        self.queue_path = self.root / QUEUE

    # ------------------------------------------------------------------ the cache

    def read_cache(self) -> Dict[str, Any]:
        try:
            data = jsonc.loads(self.cache_path.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write_cache(self, data: Dict[str, Any]) -> None:
        """Replace the cache; a clone that cannot write it still works, only slower."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            durable.atomic_write(self.cache_path, jsonc.dumps(data, separators=(",", ":")).encode("utf-8"), sync=False)
        except OSError:
            pass

    def note_failure(self, cache: Dict[str, Any], error: str) -> Dict[str, Any]:
        """Remember that the server could not be reached now (kept until a contact succeeds)."""
        cache = dict(cache, error=error, failed=time.time())
        cache.setdefault("since", cache["failed"])
        self.write_cache(cache)
        return cache

    # ------------------------------------------------------------------ the queue

    def queued(self) -> List[Dict[str, Any]]:
        """The records waiting to be written, oldest first (a torn last line is left for later)."""
        try:
            data = self.queue_path.read_bytes()
        except FileNotFoundError:
            return []
        entries = []
        for raw in data.split(b"\n")[:-1]:
            try:
                entry = jsonc.loads(raw.decode("utf-8"))
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                entries.append(entry)
        return entries

    def has_queue(self) -> bool:
        try:
            return self.queue_path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def enqueue(self, entry: Dict[str, Any]) -> None:
        """Keep one record to write later; raises when it cannot be kept (the caller must know)."""
        self.root.mkdir(parents=True, exist_ok=True)
        line = jsonc.dumps(entry, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"
        with durable.locked(self.root / QUEUE_LOCK):
            durable.append_line(self.queue_path, line, sync=os.environ.get("BATON_FSYNC", "1") != "0")

    def locked(self) -> durable.locked:
        """Hold the queue's lock: one replay at a time in this clone, and no append during it."""
        self.root.mkdir(parents=True, exist_ok=True)
        return durable.locked(self.root / QUEUE_LOCK)

    def drop(self, written: int) -> None:
        """Forget the first ``written`` entries (call it holding :meth:`locked`)."""
        rest = self.queued()[written:]
        if not rest:
            try:
                os.unlink(self.queue_path)
            except FileNotFoundError:
                pass
            return
        data = b"".join(jsonc.dumps(e, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n" for e in rest)
        durable.atomic_write(self.queue_path, data)


def new_id() -> str:
    """A unique id for one write (random: clones share no counter)."""
    return os.urandom(12).hex()


def when(epoch: Optional[float]) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)) if epoch else "?"
