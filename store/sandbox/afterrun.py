"""After a sandboxed command: undo what the mounts could not stop, and say so.

The mounts keep every existing file outside the step's globs read-only, but a folder widened for a
glob (``docs/`` for ``docs/*.md``) accepts new files, and a never-writable name that did not exist
(``.mcp.json``, ``.git/commondir``, a new match of a protect glob) cannot be bound in advance. This
walks those places again, with descriptors opened without following symlinks: a new entry the
globs do not cover, or a new never-writable one, is removed; a symlink that was replaced is put
back. It runs in PostToolUse, when a foreground command's sandbox (its pid namespace) is gone.
Then the run's overlay work folder goes, and, once no run of the job is on record, the empty
folders the sandbox made as mount points (:func:`tidy`); the model is told where a file the
command wrote under /tmp is, since the Read tool reads the host's /tmp (:func:`scratch_note`).
"""

from __future__ import annotations

import os
import stat
import time

from store.sandbox.mounts import Globs
from store.sandbox.writable import never_globs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open(name: str, dir_fd: Optional[int] = None) -> Optional[int]:
    try:
        return os.open(name, NOFOLLOW_DIR, dir_fd=dir_fd)
    except OSError:
        return None


def _rmtree(name: str, dir_fd: int) -> None:
    """Remove ``name`` in ``dir_fd`` (a file, a symlink or a whole folder), never following a symlink."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    fd = _open(name, dir_fd)
    if fd is None:
        return
    try:
        for entry in list(os.scandir(fd)):
            _rmtree(entry.name, fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def _sweep(root: str, decide: Callable[[str, os.DirEntry[str]], str], removed: List[str]) -> None:
    """Walk ``root`` without following symlinks; ``decide(path, entry)`` says what to do with each entry."""
    fd = _open(root)
    if fd is None:
        return
    stack = [(root, fd)]
    while stack:
        path, fd = stack.pop()
        try:
            for entry in sorted(os.scandir(fd), key=lambda e: e.name):
                full = os.path.join(path, entry.name)
                what = decide(full, entry)
                if what == "remove":
                    try:
                        _rmtree(entry.name, fd)
                        removed.append(full)
                    except OSError:
                        pass
                elif what == "descend":
                    child = _open(entry.name, fd)
                    if child is not None:
                        stack.append((full, child))
        finally:
            os.close(fd)


def _writes_walk(globs: Globs, walk: Mapping[str, Any], removed: List[str]) -> None:
    islands: Set[str] = set(walk.get("islands", ()))
    folders: Set[str] = set(walk.get("folders", ()))
    links = {p for p, _ in walk.get("links", ())}

    def decide(path: str, entry: os.DirEntry[str]) -> str:
        if globs.matches(path) or path in islands or path in links:
            return "skip"
        return "descend" if path in folders and entry.is_dir(follow_symlinks=False) else "remove"

    _sweep(str(walk["root"]), decide, removed)


def _never_walk(never: Globs, walk: Mapping[str, Any], removed: List[str]) -> None:
    known: Set[str] = set(walk.get("covered", ()))

    def decide(path: str, entry: os.DirEntry[str]) -> str:
        if never.matches(path):
            return "skip" if path in known else "remove"
        return "descend" if entry.is_dir(follow_symlinks=False) and never.may_contain(path) else "skip"

    _sweep(str(walk["root"]), decide, removed)


def _restore_links(walk: Mapping[str, Any], restored: List[str]) -> None:
    for path, target in walk.get("links", ()):
        try:
            if os.readlink(path) == target:
                continue
        except OSError:
            pass
        parent = _open(os.path.dirname(path))
        if parent is None:
            continue
        try:
            name = os.path.basename(path)
            _rmtree(name, parent)
            os.symlink(target, name, dir_fd=parent)
            restored.append(path)
        except OSError:
            pass
        finally:
            os.close(parent)


def check(run: Mapping[str, Any]) -> Dict[str, List[str]]:
    """Undo what ``run`` (a record from :mod:`store.sandbox.runs`) left outside its globs; report it."""
    project, home = str(run["project"]), str(run["home"])
    removed: List[str] = []
    restored: List[str] = []
    never = never_globs(project, home, run.get("protect", ()), run.get("writable", ()))
    for path in run.get("absent", ()):
        if os.path.lexists(path):
            parent = _open(os.path.dirname(path))
            if parent is not None:
                try:
                    _rmtree(os.path.basename(path), parent)
                    removed.append(path)
                except OSError:
                    pass
                finally:
                    os.close(parent)
    for walk in run.get("never_walks", ()):
        _never_walk(never, walk, removed)
    writes = run.get("writes")
    globs = Globs(project, home, ("**",) if writes is None else writes)
    for walk in run.get("walks", ()):
        _writes_walk(globs, walk, removed)
        _restore_links(walk, restored)
    return {"removed": removed, "restored": restored}


def report(found: Mapping[str, List[str]], project: str) -> str:
    """One line for the model ('' when the command left nothing to undo)."""
    from store.base.paths import relative

    def shown(paths: List[str]) -> str:
        names = [relative(p, project) or p for p in paths[:5]]
        return ", ".join(names) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")

    parts = []
    if found["removed"]:
        parts.append(f"removed {shown(found['removed'])}: outside this step's writes, or a path no command may "
                     "create (protected, or run by Claude Code or git outside the sandbox)")
    if found["restored"]:
        parts.append(f"put back the symlink {shown(found['restored'])}")
    return ("baton's sandbox " + "; ".join(parts) + ".") if parts else ""


def scratch_note(run: Mapping[str, Any]) -> str:
    """One line for the model when the command wrote a file it names under the job's /tmp (the gate
    lists them in the run's ``tmp_writes``): the Read tool runs outside the sandbox and reads the
    host's /tmp, so it is told where the file is ('' when there is none)."""
    layers = [(str(lower), str(upper)) for lower, upper in run.get("scratch", ())]
    moved = []
    for path in run.get("tmp_writes", ()) if layers else ():
        for lower, upper in layers:
            rel = os.path.relpath(str(path), lower)
            kept = os.path.join(upper, rel)
            if not rel.startswith("..") and os.path.isfile(kept) and not os.path.islink(kept):
                moved.append(f"{path} at {kept}")
    if not moved:
        return ""
    return (f"baton's sandbox kept {', '.join(moved[:3])} (the job's /tmp): the Read tool reads the host's /tmp, so "
            "read it there, or with cat.")


def after_call(state_dir: str, payload: Mapping[str, Any]) -> Tuple[Optional[str], str]:
    """For PostToolUse: the original command of this Bash call (``None`` when it ran unsandboxed) and
    what the model is told: what the after-checks undid, of this run and of background runs still on
    record, and where a file this run wrote under /tmp is (:func:`scratch_note`)."""
    from store.sandbox import runs

    original: Optional[str] = None
    lines: List[str] = []
    tool_use_id = payload.get("tool_use_id")
    mine = runs.run_id(tool_use_id) if isinstance(tool_use_id, str) and tool_use_id else ""
    for run in runs.records(state_dir):
        rid = str(run.get("id"))
        if rid == mine:
            original = str(run.get("command", ""))
            note = scratch_note(run)
            lines += [note] if note else []
        elif not run.get("checked") and not run.get("posted"):
            if run.get("stale"):
                _finish(state_dir, run)
            continue  # another call not back yet (or refused by the person): not ours to check
        text = report(check(run), str(run.get("project", "")))
        if text:
            lines.append(text if rid == mine else f"(background command `{str(run.get('command'))[:60]}`) {text}")
        if runs.lock_held(runs.paths(state_dir, rid)["lock"]):
            runs.save(state_dir, rid, {**run, "checked": True, "running": True})
        elif run.get("background") and (run.get("running") or (rid == mine and not run.get("started"))):
            # its shell may start after this hook: keep its files, and count it as running from now
            runs.save(state_dir, rid, {**run, "posted": run.get("posted") or time.time()})
        else:
            _finish(state_dir, run)
    tidy(state_dir)
    return original, " ".join(lines)


def tidy(state_dir: str) -> None:
    """Once no sandboxed run of the job is on record (running, or allowed and not started yet), remove
    the empty folders the sandbox made as mount points (``.claude``, ``.git/modules`` ...): a live
    sandbox still needs them, and removing one would undo its read-only mount."""
    from store.sandbox import runs

    if runs.records(state_dir):
        return
    for path in runs.take_made(state_dir):
        try:
            os.rmdir(path)  # only when still empty: something put there since is the person's
        except OSError:
            pass


def _finish(state_dir: str, run: Mapping[str, Any]) -> None:
    """Forget a run whose sandbox is gone, and remove its overlay work folder."""
    from store.sandbox import runs, scratch

    if run.get("work"):
        scratch.release(str(run["work"]))
    runs.finish(state_dir, str(run.get("id")))
