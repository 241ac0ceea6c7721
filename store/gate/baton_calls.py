"""``baton`` itself in Bash: which invocations run without a prompt, and how they run.

A command that is exactly one ``baton`` invocation with plain arguments (nothing chained, no
redirection, no variable) runs outside the sandbox, since ``baton record`` must append to the
ledger the sandbox keeps read-only. It runs by absolute paths (this interpreter and this plugin's
``bin/baton``), so no program on PATH can stand in for it. Reading commands (``brief``, ``status``,
``log``, ``verify``, ``--help``, ``--version``) and ``record`` of the step that is NEXT need no
prompt: they are how an unattended job reports progress. Every other invocation asks. ``baton
once`` runs its command in the sandbox all the same: the gate hands it the command line to start
it with (``BATON_ONCE_PREFIX``, a file in ``.baton/run/``).
"""

from __future__ import annotations

import os
import sys

from store.sandbox.rewrite import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Tuple

READING = ("brief", "status", "log", "verify", "--help", "-h", "--version")
LAUNCHER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bin", "baton")


def invocation(command: str) -> Optional[List[str]]:
    """The arguments after ``baton`` when ``command`` is exactly one plain ``baton`` invocation."""
    from store.shell import simple_commands

    parsed = simple_commands(command)
    if parsed.opaque or parsed.redirects or len(parsed.commands) != 1:
        return None
    simple = parsed.commands[0]
    words = simple.words
    if simple.assigns or not words or words[0] != "baton" or any(w is None for w in words):
        return None
    return [str(w) for w in words[1:]]


def safe(args: List[str], next_step: Optional[str]) -> Tuple[bool, str]:
    """(needs no prompt, why) for ``baton ARGS`` while ``next_step`` is NEXT."""
    if not args or args[0] in READING:
        return True, f"`baton {args[0] if args else ''}`".replace(" `", "`") + " only reads the job"
    if args[0] == "record" and len(args) >= 3 and next_step is not None and args[1] == next_step:
        return True, f"`baton record` of {next_step}, the step that is NEXT"
    if args[0] == "record":
        return False, "`baton record` of a step that is not NEXT"
    return False, f"`baton {args[0]}` is not one of the commands baton runs without asking"


def launcher(args: List[str], env: Optional[Mapping[str, str]] = None) -> str:
    """The command that runs ``baton ARGS`` by absolute paths, outside the sandbox, with ``env`` set."""
    python = sys.executable or "/usr/bin/python3"
    assigns = [f"{name}={quote(value)}" for name, value in (env or {}).items()]
    return " ".join([*assigns, *(quote(a) for a in [python, "-I", "-S", LAUNCHER, *args])])


LAUNCHED_MAX = 65536  # far over a baton command the model writes (a note is cut at a few KB)


def launched(line: str) -> str:
    """``baton ARGS`` as the model wrote it, when ``line`` has :func:`launcher`'s form ('' otherwise):
    PostToolUse sees the command Claude Code ran, and records and answers the model's own."""
    # shlex takes time quadratic in a word's length: only a line that can be the launcher's is split
    if len(line) > LAUNCHED_MAX or "-I" not in line or "-S" not in line or "/bin/baton" not in line:
        return ""
    import shlex

    try:
        words = shlex.split(line)
    except ValueError:
        return ""
    while words and words[0].startswith("BATON_ONCE_PREFIX="):
        words.pop(0)
    if len(words) < 4 or words[1:3] != ["-I", "-S"] or not words[3].endswith("/bin/baton"):
        return ""
    return " ".join(["baton", *(quote(a) for a in words[4:])])
