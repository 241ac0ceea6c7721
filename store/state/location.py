"""Where a job's state lives: resolution of the ``.baton`` directory and the project root.

Order: ``$BATON_DIR``; else a search from ``$CLAUDE_PROJECT_DIR`` (hooks) or the current directory
upward for a ``.baton/`` folder that stops at the project's git top level (the first folder with a
``.git``), never reaches the home folder from below and never enters a shared folder such as
``/tmp``; else a new job at the project root (the git top level, else the starting folder). Hooks
run in the model's current directory, which follows its ``cd``, so the environment comes first.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Tuple, Union

STATE_NAME = ".baton"


class Layout(Frozen):
    """The files of one job, all under ``root`` (the ``.baton`` directory)."""

    __slots__ = ("root", "project")

    def __init__(self, root: Path, project: Path) -> None:
        self.root, self.project = Path(root), Path(project)

    @property
    def plan(self) -> Path:
        return self.root / "plan.json"

    @property
    def ledger(self) -> Path:
        return self.root / "steps.jsonl"

    @property
    def snapshot(self) -> Path:
        return self.root / "state.json"

    @property
    def lock(self) -> Path:
        return self.root / "lock"

    @property
    def torn(self) -> Path:
        return self.root / "torn.log"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def hooks_lock(self) -> Path:
        return self.root / "hooks.lock"

    @property
    def counters(self) -> Path:
        return self.root / "counters.json"

    @property
    def errors(self) -> Path:
        return self.root / "errors.log"


def _shared(folder: Path) -> bool:
    """A folder every user may write into (sticky and world-writable, like ``/tmp``): a job left
    there by anyone must not capture the projects below it."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return bool(mode & stat.S_ISVTX and mode & stat.S_IWOTH)


def search_path(start: Path, home: Optional[Path]) -> Tuple[List[Path], Optional[Path]]:
    """The folders searched for a job, ``start`` first, and the git top level if one was met.

    The search ends at the first folder holding ``.git`` (included), before the home folder
    (unless ``start`` is the home folder), before a shared folder, and at the root."""
    folders: List[Path] = []
    for folder in (start, *start.parents):
        if folder != start and (folder == home or _shared(folder)):
            break
        folders.append(folder)
        if (folder / ".git").exists():
            return folders, folder
    return folders, None


def _home(env: Mapping[str, str]) -> Optional[Path]:
    raw = env.get("HOME") or os.path.expanduser("~")
    return Path(os.path.abspath(raw)) if raw and raw != "~" else None


def resolve(env: Optional[Mapping[str, str]] = None, cwd: Union[str, Path, None] = None) -> Layout:
    """Find the job's state directory and project root without touching the disk beyond stat."""
    env = os.environ if env is None else env
    here = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    project_env = env.get("CLAUDE_PROJECT_DIR") or ""
    explicit = env.get("BATON_DIR") or ""
    if explicit:
        root = Path(os.path.abspath(os.path.join(here, os.path.expanduser(explicit))))
        project = Path(os.path.abspath(project_env)) if project_env else root.parent
        return Layout(root, project)
    start = Path(os.path.abspath(project_env)) if project_env else here
    folders, top = search_path(start, _home(env))
    for folder in folders:
        if (folder / STATE_NAME).is_dir():
            return Layout(folder / STATE_NAME, folder)
    project = top or start
    return Layout(project / STATE_NAME, project)


def job_nearby(layout: Layout, env: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """Another job's ``.baton`` folder above where the search stopped (the nearest one), for
    messages that must say which job is *not* used and why."""
    env = os.environ if env is None else env
    folders, _ = search_path(layout.project, _home(env))
    for folder in folders[-1].parents if folders else ():
        candidate = folder / STATE_NAME
        if candidate != layout.root and (candidate / "plan.json").is_file():
            return candidate
    return None
