"""The bare ``/brief`` and ``/record`` commands: baton's command files, and whose file Claude Code uses.

Claude Code namespaces a plugin's commands (``/baton:brief``); a file in ``.claude/commands/``
(project) or ``~/.claude/commands/`` (user) gives a bare ``/brief``. baton writes two such files,
recognisable by :data:`MARKER`, and never writes over, or removes, a file a person wrote. The
prompt hook answers a bare command only when the file Claude Code would use for it is baton's:
the user's file when there is one (it wins over a project's), else the nearest project file.
"""

from __future__ import annotations

from pathlib import Path

from store.base import durable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

MARKER = "<!-- written by baton: `baton commands remove` takes this file out -->"
FALLBACK = ("baton's prompt hook normally answers {cmd} itself, so this text only reaches you when that hook "
            "did not run{nothing}. Tell the person that baton's hooks are not running (python3 missing, or the "
            "baton plugin disabled)")
FILES: Dict[str, str] = {
    "brief": ("---\ndescription: Show the job's brief (PLAN / DONE / NEXT / LAST), answered by baton without a "
              "model call\ndisable-model-invocation: true\n---\n" + MARKER + "\n"
              + FALLBACK.format(cmd="/brief", nothing="")
              + ", then run `baton brief` with the Bash tool and show its output unchanged.\n"),
    "record": ("---\ndescription: Record a step's outcome in the job's ledger (STATUS is running, done, failed or "
               "skipped)\nargument-hint: STEP STATUS [NOTE]\ndisable-model-invocation: true\n---\n" + MARKER + "\n"
               + FALLBACK.format(cmd="/record", nothing=", and NOTHING was recorded")
               + " and that they can record from a terminal with `baton record STEP STATUS NOTE`. Do not record "
               "it yourself on their behalf.\n"),
}
READ_LIMIT = 64 * 1024


def folder_for(scope: str, project: Path, home: Path) -> Path:
    """Where command files go: the project's ``.claude/commands`` or the user's."""
    return (home if scope == "user" else project) / ".claude" / "commands"


def is_ours(path: Path) -> bool:
    """A command file baton wrote (it carries the marker); a person's own file never does."""
    try:
        with open(path, "rb") as handle:
            return MARKER.encode() in handle.read(READ_LIMIT)
    except OSError:
        return False


def install(folder: Path) -> List[Tuple[str, str]]:
    """Write baton's files into ``folder``; (file, what happened) for each. A file that exists and
    is not baton's is left exactly as it is."""
    done = []
    for name, text in FILES.items():
        path = folder / f"{name}.md"
        if path.exists() and not is_ours(path):
            done.append((str(path), "kept: a command file of your own is there, so /" + name + " stays yours"))
            continue
        fresh = not path.exists()
        if not fresh and path.read_text(encoding="utf-8", errors="replace") == text:
            done.append((str(path), "already installed"))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        durable.atomic_write(path, text.encode("utf-8"))
        done.append((str(path), "installed" if fresh else "updated"))
    return done


def remove(folder: Path) -> List[Tuple[str, str]]:
    """Remove baton's files from ``folder``; a person's own file of the same name stays."""
    done = []
    for name in FILES:
        path = folder / f"{name}.md"
        if not path.exists():
            done.append((str(path), "not there"))
        elif not is_ours(path):
            done.append((str(path), "kept: not baton's"))
        else:
            path.unlink()
            done.append((str(path), "removed"))
    return done


def resolved(name: str, project: Path, home: Path) -> Optional[Path]:
    """The file Claude Code uses for a bare ``/name``: the user's, else the nearest project one
    (Claude Code looks in ``.claude/commands`` of the project folder and the folders above it)."""
    user = folder_for("user", project, home) / f"{name}.md"
    if user.is_file():
        return user
    for folder in (project, *project.parents):
        candidate = folder / ".claude" / "commands" / f"{name}.md"
        if candidate.is_file():
            return candidate
    return None


def answers(name: str, project: Path, home: Path) -> bool:
    """Whether baton's prompt hook should answer a bare ``/name``: only when it is baton's command."""
    path = resolved(name, project, home)
    return path is not None and is_ours(path)
