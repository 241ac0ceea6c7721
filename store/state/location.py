"""Where a job's state lives: resolution of the ``.baton`` directory and the project root.

Order: ``$BATON_DIR``; ``$CLAUDE_PROJECT_DIR/.baton``; the nearest ancestor of the current
directory holding a ``.baton/`` (as git finds ``.git``); else ``./.baton``. Hooks run in the
model's current directory, which follows its ``cd``, so the environment comes first.
"""

from __future__ import annotations

import os
from pathlib import Path

from store.base.errors import BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional, Union

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
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def rebuild_lock(self) -> Path:
        return self.root / "rebuild.lock"

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


def _ancestor_with_state(start: Path) -> Optional[Path]:
    for folder in (start, *start.parents):
        if (folder / STATE_NAME).is_dir():
            return folder / STATE_NAME
    return None


def resolve(env: Optional[Mapping[str, str]] = None, cwd: Union[str, Path, None] = None) -> Layout:
    """Find the job's state directory and project root without touching the disk beyond stat."""
    env = os.environ if env is None else env
    try:
        here = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    except FileNotFoundError:
        raise BatonError("the current folder no longer exists (it was deleted or moved); cd into the project "
                         "and run the command again") from None
    project_env = env.get("CLAUDE_PROJECT_DIR") or ""
    explicit = env.get("BATON_DIR") or ""
    if explicit:
        root = Path(os.path.abspath(os.path.join(here, os.path.expanduser(explicit))))
        project = Path(os.path.abspath(project_env)) if project_env else root.parent
        return Layout(root, project)
    if project_env:
        project = Path(os.path.abspath(project_env))
        return Layout(project / STATE_NAME, project)
    found = _ancestor_with_state(here)
    if found is not None:
        return Layout(found, found.parent)
    return Layout(here / STATE_NAME, here)
