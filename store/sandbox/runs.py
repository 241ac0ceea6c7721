"""Sandboxed runs in flight: ``.baton/run/<id>.{json,args,lock}``, written by the gate, read after the command.

PreToolUse writes, for each sandboxed Bash call, the model's original command and what the
after-check needs (``.json``), bwrap's arguments (``.args``), the script the rewritten command
sources (``.sh``), for a command that calls ``baton``, what its broker needs (``.broker``;
the broker's socket is ``.sock``), and an empty lock file that bwrap
holds for as long as anything in that sandbox runs (``--lock-file``). PostToolUse only sees the
rewritten command, so it finds the original here by the call's ``tool_use_id``. A held lock is a
command still running (in the background, or moved there by its timeout): Write, Edit and
NotebookEdit wait for it to end. A run counts as running from the moment PreToolUse allows it
(its ``.json``; one Claude Code asks the person about, ``asked``, once its PostToolUse came):
until its shell starts (a background command's shell starts after its PostToolUse may have run),
for up to ``PENDING_SECONDS`` after PreToolUse or after its PostToolUse; then, once the rewritten
command touched ``.started`` just before bwrap starts, for ``STARTING_SECONDS`` (the moment
before bwrap takes the lock); then while the lock is
held. Nothing inside a sandbox can write here (``.baton`` is read-only).
"""

from __future__ import annotations

import os
import time

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional


FOLDER = "run"
MADE = "made"  # folders the sandbox made in the project as mount points (removed when no run needs them)
STARTING_SECONDS = 3.0  # a run started (its shell touched ``.started``) whose lock is not held yet is starting
# a run allowed whose shell has not started yet (a background command's shell may start after its PostToolUse).
# A call allowed here and refused after (a later hook, a deny rule) leaves its record too, and no hook says so:
# the wait is bounded, and past it writes go on
PENDING_SECONDS = 60.0
STALE_SECONDS = 24 * 3600


def folder(state_dir: str) -> str:
    return os.path.join(state_dir, FOLDER)


def run_id(tool_use_id: Any) -> str:
    """A file name for the call: its ``tool_use_id`` when it has one, else a fresh random one."""
    if isinstance(tool_use_id, str) and tool_use_id:
        return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in tool_use_id[:100])
    import secrets

    return "call_" + secrets.token_hex(8)


def paths(state_dir: str, rid: str) -> Dict[str, str]:
    base = os.path.join(folder(state_dir), rid)
    return {"record": base + ".json", "args": base + ".args", "lock": base + ".lock", "started": base + ".started",
            "script": base + ".sh", "broker": base + ".broker", "socket": base + ".sock"}


def start(state_dir: str, rid: str, record: Mapping[str, Any]) -> Dict[str, str]:
    """Write the run's record and its empty lock file; return the run's file paths."""
    where = folder(state_dir)
    if not os.path.isdir(where):
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, ".gitignore"), "wb") as handle:  # bytes: no text codec to load
            handle.write(b"*\n")
    files = paths(state_dir, rid)
    for name in files:  # a reused id (a retried call) starts clean
        _remove(files[name])
    with open(files["lock"], "wb"):
        pass
    data = jsonc.dumps({**record, "id": rid, "at": time.time()}, ensure_ascii=True).encode("ascii")
    with open(files["record"], "wb") as handle:
        handle.write(data)
    return files


def load(state_dir: str, rid: str) -> Optional[Dict[str, Any]]:
    try:
        with open(paths(state_dir, rid)["record"], "rb") as handle:
            data = jsonc.loads(handle.read().decode("ascii"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def save(state_dir: str, rid: str, record: Mapping[str, Any]) -> None:
    from store.base import durable

    durable.atomic_write(paths(state_dir, rid)["record"], jsonc.dumps(record, ensure_ascii=True).encode(), False)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def finish(state_dir: str, rid: str) -> None:
    for path in paths(state_dir, rid).values():
        _remove(path)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0  # never started: a call the person refused, or one not run yet


def lock_held(path: str) -> bool:
    """Some process (bwrap, for a sandbox still running) holds a lock on ``path``."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


def records(state_dir: str) -> List[Dict[str, Any]]:
    """Every run on record, oldest first, with ``running`` set from its lock, its ``.started`` mark or its
    age, and ``pending`` when it counts as running only because its shell has not started yet."""
    try:
        names = [n for n in os.listdir(folder(state_dir)) if n.endswith(".json")]
    except OSError:
        return []
    found, now = [], time.time()
    for name in names:
        data = load(state_dir, name[:-5])
        if data is None:
            continue
        files = paths(state_dir, name[:-5])
        held = lock_held(files["lock"])
        started = _mtime(files["started"])
        if held or data.get("checked"):  # a run seen with its lock held has ended once the lock is free
            data["running"] = held
        elif started:
            data["running"] = now - started < STARTING_SECONDS
        else:  # allowed, its shell not started yet: from PreToolUse's allow (an ask: from the person's, which no
            # hook sees; a refused call must not hold writes) or its PostToolUse, for a background one
            since = max(0.0 if data.get("asked") else float(data.get("at", 0) or 0), float(data.get("posted", 0) or 0))
            data["running"] = now - since < PENDING_SECONDS
        data["pending"] = not held and not started and data["running"]
        data["started"] = bool(started)
        data["stale"] = not held and now - float(data.get("at", 0)) > STALE_SECONDS
        found.append(data)
    return sorted(found, key=lambda d: float(d.get("at", 0)))


def note_made(state_dir: str, made: List[str]) -> None:
    """Note folders the sandbox made empty in the project to bind them read-only (one path a line)."""
    where = folder(state_dir)
    os.makedirs(where, exist_ok=True)
    data = "".join(f"{path}\n" for path in made).encode("utf-8", "surrogateescape")
    fd = os.open(os.path.join(where, MADE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)  # one write: concurrent calls append whole lines
    finally:
        os.close(fd)


def take_made(state_dir: str) -> List[str]:
    """The folders noted by :func:`note_made`, forgotten as they are handed over."""
    path = os.path.join(folder(state_dir), MADE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        os.unlink(path)
    except OSError:
        return []
    return list(dict.fromkeys(line.decode("utf-8", "surrogateescape") for line in raw.splitlines() if line))


def running(state_dir: str) -> List[Dict[str, Any]]:
    return [r for r in records(state_dir) if r["running"]]
