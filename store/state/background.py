"""Finishing the snapshot outside a reader's critical path: one detached process per job rebuilds it.

A reader that answered from a partial snapshot (``store.state.quickread``) starts this process and
returns at once. The process takes ``rebuild.lock`` without waiting (a second one exits), folds the
whole ledger at low priority (going on from a replay saved part way, and saving its own progress as
it goes: ``store.state.resume``), then, holding the ledger's lock, applies what was appended meanwhile
and replaces ``state.json`` atomically. Killed at any point it leaves what was there before (no
snapshot, or a temp file nothing reads), and the next reader starts another.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from store.base import durable
from store.state import resume, snapshot
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

CODE = "import sys; sys.path.insert(0, sys.argv[1]); from store.state.background import main; main(sys.argv[2])"


def available() -> bool:
    return os.name == "posix"


def _try_lock(layout: Layout) -> Optional[int]:
    """A descriptor holding ``rebuild.lock``, or ``None`` when another process holds it."""
    import fcntl

    fd = os.open(str(layout.rebuild_lock), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def start(layout: Layout) -> bool:
    """Start the rebuild unless one is running or the state folder cannot be written."""
    if not available() or not os.access(str(layout.root), os.W_OK):
        return False
    try:
        fd = _try_lock(layout)
        if fd is None:
            return False  # a rebuild is already running
        os.close(fd)
        import subprocess

        plugin = Path(__file__).resolve().parents[2]
        subprocess.Popen([sys.executable, "-S", "-c", CODE, str(plugin), str(layout.root)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=str(layout.root), start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True


SLICE_SECONDS = 2.0  # replayed between saves of the progress (store.state.resume), which the hooks go on from


def finish(layout: Layout) -> None:
    """Rebuild the snapshot from the whole ledger and save it caught up with the ledger's end. The
    replay goes on from the furthest progress saved (by a hook or an earlier rebuild) and saves its
    own every :data:`SLICE_SECONDS`, so that a hook killed or a rebuild killed loses little."""
    progress = resume.read(layout)
    while True:
        progress, how = resume.advance(layout, progress, SLICE_SECONDS)
        if how.done:
            break
        resume.save(layout, progress)
        saved = resume.read(layout)  # a hook may have got further meanwhile
        if saved is not None and saved.snapshot.offset > progress.snapshot.offset:
            progress = saved
    with durable.locked(layout.lock):
        snap = progress.snapshot
        if not snapshot.matches(snap, layout.ledger):
            snap = snapshot.rebuild(layout.ledger).snapshot  # replaced or cut meanwhile
        else:
            snapshot.catch_up(snap, layout.ledger, snap.offset)
        durable.atomic_write(layout.snapshot, snap.to_bytes(), sync=False)
    resume.clear(layout)


def main(root: str) -> None:
    layout = Layout(Path(root), Path(root).parent)
    fd = _try_lock(layout)
    if fd is None:
        return
    try:
        os.nice(10)  # the session that started it comes first
        finish(layout)
    except (OSError, ValueError):
        pass  # the next reader tries again; a hook reports what it cannot write
    finally:
        os.close(fd)
