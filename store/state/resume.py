"""A replay of the whole ledger that saves its progress, so that readers with a time budget finish it together.

A hook must answer within Claude Code's timeout (10 s), and a fresh clone of a long job (no
``state.json``) can need more than that to replay: when the quick read from the ledger's end
cannot be exact (``store.state.quickread``: a parallel step held since the job began, a merged
record), a hook replays for at most :func:`seconds` and, when it did not get to the end, saves what
it folded in ``replay.json``: the snapshot of the ledger up to the last whole line folded (its
offset and ``end_mark``, the last bytes of that line, hold its place) and how many lines came
before it, for the line numbers of damaged lines. The next reader goes on from there (the quick read
too: what the replay folded is exact for the bytes before its offset), so each hook run moves the
replay on and, after a few, the whole state is saved as the usual ``state.json``.

Saving is best effort and never waits: it takes ``replay.lock`` without blocking (another process
saving: skip), keeps a saved progress that is further along (never goes back), and a progress only
counts while the ledger still holds its last line at its offset (a rewrite, a cut or a ledger of
another job: start over). Nothing here takes the ledger's lock, so appends never wait on a replay.
A read-only ``.baton`` still gets its answer; nothing is saved then. ``BATON_TEST_READ_SECONDS``
shrinks a hook's budget (the quick read gets a quarter of it), so tests can use small ledgers.
"""

from __future__ import annotations

import os
import sys
import time

from store.base import jsonc
from store.base.values import Value
from store.state import snapshot
from store.state.location import LEDGER, Layout
from store.state.snapshot import Loaded, Replayed, Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Mapping, Optional, Tuple

REPLAY, REPLAY_LOCK = "replay.json", "replay.lock"
HOOK_SECONDS = 4.0  # a hook's replay, after its quick read: start-up, the quick read and this stay well under 10 s
QUICK_SHARE = 0.25  # the quick read's share of BATON_TEST_READ_SECONDS (1 s beside the 4 s above)
ENV = "BATON_TEST_READ_SECONDS"


class Progress(Value):
    __slots__ = ("snapshot", "lines")

    def __init__(self, snap: Snapshot, lines: int) -> None:
        self.snapshot = snap  # the state of the ledger up to snap.offset, exactly
        self.lines = lines  # the ledger's lines before snap.offset

    def to_bytes(self) -> bytes:
        return b'{"lines":%d,"state":%s}' % (self.lines, self.snapshot.to_bytes())

    @classmethod
    def from_bytes(cls, raw: bytes) -> Optional[Progress]:
        try:
            data = jsonc.loads(raw.decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or set(data) != {"lines", "state"}:
            return None
        lines = data["lines"]
        if not isinstance(lines, int) or isinstance(lines, bool) or lines < 0:
            return None
        snap = Snapshot.from_bytes(jsonc.dumps(data["state"], separators=(",", ":")).encode("ascii"))
        return cls(snap, lines) if snap is not None else None


def in_hook() -> bool:
    """Whether this process is one hook call (``hooks.adapter.main`` ran)."""
    return bool(getattr(sys.modules.get("hooks.adapter"), "IN_HOOK", False))


_spent = 0.0  # seconds this process has replayed with a budget: a hook's budget is for all its reads together


def budget(env: Optional[Mapping[str, str]] = None) -> float:
    """How long one hook run may replay in all: :data:`HOOK_SECONDS`, or what ``BATON_TEST_READ_SECONDS`` says."""
    raw = (os.environ if env is None else env).get(ENV, "")
    try:
        value = float(raw) if raw else HOOK_SECONDS
    except ValueError:
        return HOOK_SECONDS
    return value if 0 <= value < HOOK_SECONDS else HOOK_SECONDS


def seconds(env: Optional[Mapping[str, str]] = None) -> float:
    """What is left of this process's :func:`budget`."""
    return max(0.0, budget(env) - _spent)


def quick_seconds(default: float, env: Optional[Mapping[str, str]] = None) -> float:
    """The quick read's budget: ``default``, or its share of ``BATON_TEST_READ_SECONDS`` when set."""
    return min(default, budget(env) * QUICK_SHARE) if (os.environ if env is None else env).get(ENV) else default


def read(layout: Layout) -> Optional[Progress]:
    """The saved progress when it is whole and the ledger still holds its last line at its offset."""
    try:
        with open(layout.file(REPLAY), "rb") as handle:
            progress = Progress.from_bytes(handle.read())
    except OSError:
        return None
    if progress is None or not snapshot.matches(progress.snapshot, layout.file(LEDGER)):
        return None
    return progress


def advance(layout: Layout, start: Optional[Progress], limit: Optional[float]) -> Tuple[Progress, Replayed]:
    """Replay from ``start`` (from the ledger's first line when ``None``) for at most ``limit``
    seconds (to the end when ``None``); the progress made and how the replay ended."""
    global _spent
    progress = start if start is not None else Progress(Snapshot(), 0)
    snap = progress.snapshot
    began = time.monotonic()
    deadline = began + limit if limit is not None else None
    done = snapshot.replay(snap, layout.file(LEDGER), snap.offset, progress.lines, deadline)
    if limit is not None:
        _spent += time.monotonic() - began
    return Progress(snap, int(done.lines or 0)), done


def read_on(layout: Layout, progress: Optional[Progress], save_whole: Optional[Callable[[Loaded], bool]]) -> Loaded:
    """The whole state, replayed from ``progress``; in a hook, only for what is left of its budget:
    then, when it did not get to the end, the state so far with ``reading`` set, its progress saved.
    ``save_whole`` saves a whole state (True when it did); ``None``: nothing is saved."""
    made, how = advance(layout, progress, seconds() if in_hook() else None)
    snap = made.snapshot
    if how.done:
        loaded = Loaded(snap, how.torn, True)
        if save_whole is not None:
            if save_whole(loaded):
                clear(layout)
            else:  # a writer moved the ledger on meanwhile: keep what was read for the next reader
                save(layout, made)
        return loaded
    why = save(layout, made) if save_whole is not None else "this reader saves nothing"
    return Loaded(snap, 0, False, partial=True, reading=(snap.offset, snapshot.ledger_size(layout.file(LEDGER)), why))


def save(layout: Layout, progress: Progress) -> str:
    """Save ``progress`` unless another process is saving, or a saved one is as far along; ""
    when saved, else why not (a sentence)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock: one process at a time is all that is safe
        return "no file locks here"
    from store.base import durable

    try:
        fd = os.open(layout.file(REPLAY_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        return f"cannot open {REPLAY_LOCK}: {exc.strerror or exc}"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "another process is saving its progress"
        saved = read(layout)
        if saved is not None and saved.snapshot.offset >= progress.snapshot.offset:
            return "a saved progress is as far along"
        durable.atomic_write(layout.file(REPLAY), progress.to_bytes(), sync=False)
        return ""
    except OSError as exc:
        return f"cannot save {REPLAY}: {exc.strerror or exc}"
    finally:
        os.close(fd)


def clear(layout: Layout) -> None:
    """Remove the saved progress once the whole state is saved (best effort)."""
    try:
        os.unlink(layout.file(REPLAY))
    except OSError:
        pass
