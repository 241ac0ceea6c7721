"""git and the ledger: registering baton's merge driver in a repository, and running it.

``.baton/.gitattributes`` (committed with the plan) says ``steps.jsonl merge=baton``; the driver's
command lives in the repository's own ``.git/config``, which git never copies, so every clone runs
``baton merge --register`` once (``baton init`` does it for the repository it creates the job in).
Without it git merges the ledger as text: a conflict that ``baton repair`` can move aside.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from store.base.errors import BatonError
from store.ledger.merge import DRIVER, Merged, merge
from store.state import journal
from store.state.location import Layout

ATTRIBUTE = f"steps.jsonl merge={DRIVER}"
BATON = Path(__file__).resolve().parents[2] / "bin" / "baton"


def _git(project: Path, *args: str) -> str:
    """git run so that it runs nothing the project holds (:mod:`store.base.safe_git`); baton's own
    merge driver is the one it may read back."""
    from store.base import safe_git

    done = subprocess.run(safe_git.argv(str(project), ["-C", str(project), *args], keep=f"merge.{DRIVER}"),
                          cwd=str(project), env=safe_git.environment(), capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise BatonError(f"git {' '.join(args[:2])} failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return done.stdout.strip()


def register(layout: Layout, required: bool = False) -> str:
    """Register the driver for the job's repository; the message to show, or "" when the project is
    not in a git repository (an error instead when ``required``)."""
    try:
        _git(layout.project, "rev-parse", "--show-toplevel")
    except (BatonError, OSError) as exc:
        if required:
            raise BatonError(f"{layout.project} is not inside a git repository ({exc})") from None
        return ""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(BATON))} merge %O %A %B"
    _git(layout.project, "config", f"merge.{DRIVER}.name", "baton ledger merge: re-chains the other branch's records")
    _git(layout.project, "config", f"merge.{DRIVER}.driver", command)
    attributes = layout.root / ".gitattributes"
    lines = attributes.read_text(encoding="utf-8").splitlines() if attributes.exists() else []
    if ATTRIBUTE not in lines:
        layout.root.mkdir(parents=True, exist_ok=True)
        attributes.write_text("\n".join([*lines, ATTRIBUTE]) + "\n", encoding="utf-8")
    return ("registered baton's merge driver for .baton/steps.jsonl in git (each new clone runs "
            "`baton merge --register` once)")


def merge_files(ours: Path, theirs: Path) -> Merged:
    """git's call: append theirs' own records to ``ours`` (git's temporary file) re-chained."""
    return merge(ours, theirs, journal.now_iso())
