"""Where a job's state lives: resolution of the ``.baton`` directory and the project root.

Order: ``$BATON_DIR``; else a search from ``$CLAUDE_PROJECT_DIR`` (hooks) or the current directory
upward for a ``.baton/`` folder that stops at the project's git top level (the first folder with a
``.git``), never reaches the home folder from below and never enters a shared folder such as
``/tmp``; else a new job at the project root (the git top level, else the starting folder). Hooks
run in the model's current directory, which follows its ``cd``, so the environment comes first.
The search works on strings: a hook that finds no job has imported nothing more (``pathlib``
alone costs a hook process milliseconds); a :class:`Layout` makes ``Path`` objects when asked.
"""

from __future__ import annotations

import errno
import os
import stat

from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import List, Mapping, Optional, Tuple, Union

STATE_NAME = ".baton"
# the files the hooks read on every call, by name (``Layout.file``)
PLAN, LEDGER, SNAPSHOT, LOCK, COUNTERS, HOOKS_LOCK, EVENTS, TORN = (
    "plan.json", "steps.jsonl", "state.json", "lock", "counters.json", "hooks.lock", "events.jsonl", "torn.log")
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # what pathlib's exists() reads as "not there"


def pure(path: Union[str, Path]) -> str:
    """``str(Path(path))`` without importing pathlib: on POSIX, repeated and trailing slashes and
    ``.`` parts dropped (``..`` kept, two leading slashes kept, as pathlib does)."""
    text = os.fspath(path)
    if os.sep != "/":  # pragma: no cover - Windows: pathlib's own rules
        from pathlib import Path

        return str(Path(text))
    lead = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    body = "/".join(part for part in text.split("/") if part and part != ".")
    return lead + body if lead or body else "."


def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def stat_of(path: str) -> Optional[os.stat_result]:
    """``os.stat(path)``, or ``None`` where ``Path.exists()`` says False (missing, not a folder on
    the way, a symlink loop); any other error is raised, as ``Path.exists()`` raises it."""
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno in _ABSENT or getattr(exc, "winerror", None) in (21, 123, 1921):
            return None
        raise
    except ValueError:  # a NUL in the path
        return None


def _is_dir(path: str) -> bool:
    found = stat_of(path)
    return found is not None and stat.S_ISDIR(found.st_mode)


class Layout(Frozen):
    """The files of one job, all under ``root`` (the ``.baton`` directory). ``root``, ``project``
    and the file properties are ``Path`` objects; ``state_dir``, ``project_dir`` and :meth:`file`
    give the same places as strings, for the hooks' hot path, which does not import pathlib."""

    __slots__ = ("state_dir", "project_dir")

    def __init__(self, root: Union[str, Path], project: Union[str, Path]) -> None:
        self.state_dir, self.project_dir = pure(root), pure(project)

    @property
    def root(self) -> Path:
        return _as_path(self.state_dir)

    @property
    def project(self) -> Path:
        return _as_path(self.project_dir)

    def file(self, name: str) -> str:
        """``str(self.root / name)`` for a plain file name."""
        return name if self.state_dir == "." else os.path.join(self.state_dir, name)

    def has_plan(self) -> bool:
        """Is there a job here at all? True when ``plan.json`` exists, and also when it is a link that
        leads nowhere (a loop, a missing target): a plan that cannot be read is a broken job, which
        the gate must refuse to guess about, not a project without one."""
        path = self.file(PLAN)
        if stat_of(path) is not None:
            return True
        try:
            return stat.S_ISLNK(os.lstat(path).st_mode)
        except (OSError, ValueError):
            return False

    @property
    def plan(self) -> Path:
        return self.root / PLAN

    @property
    def ledger(self) -> Path:
        return self.root / LEDGER

    @property
    def snapshot(self) -> Path:
        return self.root / SNAPSHOT

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @property
    def torn(self) -> Path:
        return self.root / TORN

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def rebuild_lock(self) -> Path:
        return self.root / "rebuild.lock"

    @property
    def events(self) -> Path:
        return self.root / EVENTS

    @property
    def hooks_lock(self) -> Path:
        return self.root / HOOKS_LOCK

    @property
    def counters(self) -> Path:
        return self.root / COUNTERS

    @property
    def errors(self) -> Path:
        return self.root / "errors.log"


def _shared(folder: str) -> bool:
    """A folder every user may write into (sticky and world-writable, like ``/tmp``): a job left
    there by anyone must not capture the projects below it."""
    try:
        mode = os.stat(folder).st_mode
    except (OSError, ValueError):
        return False
    return bool(mode & stat.S_ISVTX and mode & stat.S_IWOTH)


def _search(start: str, home: Optional[str]) -> Tuple[List[str], Optional[str]]:
    """:func:`search_path` on absolute, normal path strings."""
    folders: List[str] = []
    folder = start
    while True:
        if folder != start and (folder == home or _shared(folder)):
            break
        folders.append(folder)
        if stat_of(os.path.join(folder, ".git")) is not None:
            return folders, folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folders, None


def search_path(start: Path, home: Optional[Path]) -> Tuple[List[Path], Optional[Path]]:
    """The folders searched for a job, ``start`` first, and the git top level if one was met.

    The search ends at the first folder holding ``.git`` (included), before the home folder
    (unless ``start`` is the home folder), before a shared folder, and at the root."""
    folders, top = _search(pure(start), pure(home) if home is not None else None)
    return [_as_path(f) for f in folders], _as_path(top) if top is not None else None


def _home_dir(env: Mapping[str, str]) -> Optional[str]:
    raw = env.get("HOME") or os.path.expanduser("~")
    return os.path.abspath(raw) if raw and raw != "~" else None


def resolve(env: Optional[Mapping[str, str]] = None, cwd: Union[str, Path, None] = None) -> Layout:
    """Find the job's state directory and project root without touching the disk beyond stat."""
    env = os.environ if env is None else env
    try:
        here = os.path.abspath(cwd if cwd is not None else os.getcwd())
    except FileNotFoundError:
        from store.base.errors import BatonError

        raise BatonError("the current folder no longer exists (it was deleted or moved); cd into the project "
                         "and run the command again") from None
    project_env = env.get("CLAUDE_PROJECT_DIR") or ""
    explicit = env.get("BATON_DIR") or ""
    if explicit:
        root = os.path.abspath(os.path.join(here, os.path.expanduser(explicit)))
        project = os.path.abspath(project_env) if project_env else os.path.dirname(root)
        return Layout(root, project)
    start = os.path.abspath(project_env) if project_env else here
    folders, top = _search(start, _home_dir(env))
    for folder in folders:
        state = os.path.join(folder, STATE_NAME)
        if _is_dir(state):
            return Layout(state, folder)
    project = top or start
    return Layout(os.path.join(project, STATE_NAME), project)


def job_nearby(layout: Layout, env: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """Another job's ``.baton`` folder above where the search stopped (the nearest one), for
    messages that must say which job is *not* used and why."""
    env = os.environ if env is None else env
    folders, _ = _search(layout.project_dir, _home_dir(env))
    folder = folders[-1] if folders else ""
    while folder and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
        candidate = os.path.join(folder, STATE_NAME)
        found = stat_of(os.path.join(candidate, PLAN)) if candidate != layout.state_dir else None
        if found is not None and stat.S_ISREG(found.st_mode):
            return _as_path(candidate)
    return None
