"""The git side of a checkpoint: the project's commit and whether its tracked files (``.baton/``
aside) differ from it, and the ``git patch-id`` of a step's change (the diff of tracked files from
the commit the step started at to the working tree), so the same change recorded twice is seen
as one. Nothing here runs when the project is not a git checkout or git is not installed, and git
runs here so that it runs nothing the project holds (:mod:`store.base.safe_git`): ``baton record``
runs outside the sandbox, in folders the model writes.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, List, Optional

    from store.state.snapshot import Snapshot

TIMEOUT = 30
EXCLUDE = ":(exclude).baton"


def in_checkout(project: Path) -> bool:
    folder = os.path.abspath(str(project))
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            import shutil  # in a checkout only, as subprocess below

            return shutil.which("git") is not None
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _git(project: Path, args: List[str], stdin: Optional[bytes] = None) -> Optional[bytes]:
    """git run so that it runs nothing the project holds (:mod:`store.base.safe_git`)."""
    import subprocess  # only in a checkout: `baton record` elsewhere does not load it

    from store.base import safe_git

    try:
        proc = subprocess.run(safe_git.argv(str(project), args), cwd=str(project), input=stdin, capture_output=True,
                              timeout=TIMEOUT, env=safe_git.environment())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def revision(project: Path) -> Dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` (``{}`` outside a checkout or before the first commit)."""
    if not in_checkout(project):
        return {}
    head = _git(project, ["rev-parse", "--verify", "-q", "HEAD"])
    if not head:
        return {}
    status = _git(project, ["status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all", "--", ".",
                            EXCLUDE])
    return {"commit": head.decode().strip(), "dirty": bool(status and status.strip())}


def patch_id(project: Path, base: str) -> Optional[str]:
    """The stable patch id of the tracked changes from ``base`` to the working tree (None: none)."""
    diff = _git(project, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all",
                          "--full-index", base, "--", ".", EXCLUDE])
    if not diff:
        return None
    out = _git(project, ["patch-id", "--stable"], stdin=diff)
    return out.split()[0].decode() if out and out.split() else None


def base_commit(snap: Snapshot, step_id: str) -> Optional[str]:
    """Where the step's change starts: its earlier ``done`` record's base, else the commit of its
    ``running`` record, else the commit of the latest record of another step."""
    info = snap.steps.get(step_id, {})
    if info.get("status") == "done" and info.get("base"):
        return str(info["base"])
    if info.get("status") == "running" and info.get("commit"):
        return str(info["commit"])
    others = [v for k, v in snap.steps.items() if k != step_id and v.get("commit")]
    latest = max(others, key=lambda v: int(v.get("seq") or 0), default=None)
    return str(latest["commit"]) if latest else None
