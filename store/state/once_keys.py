"""Which ``baton once`` keys have run: the per-key index on disk, and the brief lines about them.

The ledger is the truth. The snapshot folds each ``intent`` and ``result`` record into
``once_pending`` (key digest -> seq and start offset of the key's latest record), and
:func:`flush` moves those entries into 256 shard files ``.baton/once/<xx>.json`` (by the digest's
first two hex digits). A lookup reads the small snapshot, one shard and one ledger line: its cost
depends neither on the ledger's length nor on how many keys the job has, and ``state.json`` (read
by every hook) stays small. Every entry is checked against the ledger line it points to; an
index that does not match the ledger is rebuilt from it once.
"""

from __future__ import annotations

from store.base import durable, jsonc
from store.base.text import one_line
from store.ledger.ledger import read_at
from store.state import keylock, snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, List, Optional

    from store.state.location import Layout
    from store.state.snapshot import Snapshot

FOLDER = "once"
SHARD_VERSION = 1
SHOWN = 3  # UNKNOWN and ONCE lines in a brief, at most
PROBED = 50  # open keys whose lock a brief checks, at most


class IndexMismatch(Exception):
    """An index entry does not point at this key's record: the index is rebuilt from the ledger."""


def folder(layout: Layout) -> Path:
    return layout.root / FOLDER


def shard_path(layout: Layout, digest: str) -> Path:
    return folder(layout) / f"{digest[:2]}.json"


def read_shard(path: Path) -> Dict[str, List[int]]:
    try:
        data = jsonc.loads(path.read_bytes().decode("ascii"))
    except (OSError, ValueError):
        return {}
    keys = data.get("keys") if isinstance(data, dict) and data.get("version") == SHARD_VERSION else None
    return keys if isinstance(keys, dict) else {}


def flush(layout: Layout, snap: Snapshot) -> None:
    """Move the snapshot's pending entries into the shard files; call it holding the ledger lock.
    Entries that cannot be written stay pending (lookups read them from the snapshot)."""
    if not snap.once_pending:
        return
    by_shard: Dict[str, List[str]] = {}
    for digest in snap.once_pending:
        by_shard.setdefault(digest[:2], []).append(digest)
    try:
        where = keylock.make_folders(layout)
        for prefix, digests in sorted(by_shard.items()):
            path = where / f"{prefix}.json"
            keys = read_shard(path)
            for digest in digests:
                ref = snap.once_pending[digest]
                if digest not in keys or keys[digest][0] <= ref[0]:
                    keys[digest] = ref
            body = jsonc.dumps({"version": SHARD_VERSION, "keys": keys}, separators=(",", ":")).encode("ascii")
            durable.atomic_write(path, body, sync=False)
            for digest in digests:
                del snap.once_pending[digest]
    except OSError:
        return


def lookup(layout: Layout, snap: Snapshot, key: str) -> Optional[Dict[str, Any]]:
    """The latest ``intent`` or ``result`` record of ``key``, or ``None`` when it never ran.
    ``snap`` must be current; raises :class:`IndexMismatch` when the index is wrong."""
    digest = snapshot.key_digest(key)
    refs = [ref for ref in (snap.once_pending.get(digest), read_shard(shard_path(layout, digest)).get(digest))
            if isinstance(ref, list) and len(ref) == 2]
    if not refs:
        return None
    seq, at = max(refs)
    record = read_at(layout.ledger, at) if isinstance(at, int) and at >= 0 else None
    if (record is None or record.get("seq") != seq or record.get("key") != key
            or record.get("status") not in snapshot.ONCE_STATUSES):
        raise IndexMismatch(f"the once index points at the wrong ledger line for {key!r}")
    return record


def rebuild(layout: Layout) -> Snapshot:
    """Rebuild the snapshot and every shard from the whole ledger (the slow path, taken when the
    index does not match the ledger); returns the fresh snapshot."""
    with durable.locked(layout.lock):
        fresh = snapshot.rebuild(layout.ledger).snapshot
        where = folder(layout)
        for old in where.glob("*.json") if where.is_dir() else ():
            old.unlink()
        flush(layout, fresh)
        durable.atomic_write(layout.snapshot, fresh.to_bytes(), sync=False)
    return fresh


def idempotency_key(first_hash: str, key: str) -> str:
    """``BATON_IDEMPOTENCY_KEY``: the job (the hash of its first ledger record, the same in every
    clone of the ledger) and the key, hashed; stable across retries of the same key."""
    from hashlib import sha256

    return "baton-" + sha256(f"baton-once\0{first_hash}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()[:40]


def settle_hint(key: str) -> str:
    import shlex

    return f"baton once --settle {shlex.quote(key)} done|failed|retry \"<evidence>\""


def unknown_news(layout: Layout, snap: Snapshot) -> List[str]:
    """One ``UNKNOWN`` line per open intent whose process is gone (at most :data:`SHOWN`, then a count)."""
    lines: List[str] = []
    more = 0
    ordered = sorted(snap.once_open.items(), key=lambda item: int(item[1].get("seq") or 0))
    for index, (key, info) in enumerate(ordered):
        if index < PROBED and keylock.busy(layout, key):
            continue  # still running: a second `baton once` of it waits for its result
        if len(lines) < SHOWN:
            lines.append(f"UNKNOWN: {one_line(key, 60)} ({one_line(str(info.get('step') or '-'), 40)}) started "
                         f"{info.get('ts', '?')}: verify, then settle: {one_line(settle_hint(key), 120)}")
        else:
            more += 1
    if more:
        lines.append(f"UNKNOWN: {more} more side effects have an unknown outcome; `baton status` lists them")
    return lines


def result_news(snap: Snapshot, step: str) -> List[str]:
    """One ``ONCE`` line per recent result of the step in progress: the model sees what already ran."""
    lines = []
    for entry in [e for e in snap.once_recent if e.get("step") == step][-SHOWN:]:
        how = "ran" if entry.get("outcome") == "ran" else f"was settled {entry.get('outcome')}"
        ident = f", id {one_line(str(entry['id']), 60)}" if entry.get("id") else ""
        lines.append(f"ONCE: {one_line(str(entry.get('key')), 60)} ({one_line(step, 40)}) {how} at "
                     f"{entry.get('ts')}: exit {entry.get('exit')}{ident}; `baton once` of it again replays this "
                     "result and runs nothing")
    return lines
