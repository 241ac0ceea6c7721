"""``baton`` itself in Bash: which invocations run without a prompt, and how they run.

A command that is exactly one ``baton`` invocation with plain arguments (nothing chained, no
redirection, no variable) runs outside the sandbox, since ``baton record`` must append to the
ledger the sandbox keeps read-only. It runs by absolute paths (this interpreter and this plugin's
``bin/baton``), so no program on PATH can stand in for it. What needs no prompt is what the loop
needs: reading commands (``brief``, ``status``, ``log``, ``verify``, ``--help``, ``--version``),
``record`` of the step that is NEXT (in a parallel plan, the one this worker holds), ``claim`` and
``release`` for this worker, and ``once --settle``; ``baton once KEY -- CMD`` is decided as CMD
itself would be in the sandbox (:mod:`store.gate.enforce`). Every other invocation asks. ``baton
once`` runs its command in the sandbox all the same: the gate hands it the command line to start
it with (``BATON_ONCE_PREFIX``, a file in ``.baton/run/``). A ``baton`` call chained with other
commands reaches the job through the broker (:mod:`store.gate.broker`), with this same authority.
"""

from __future__ import annotations

import os
import sys

from store.sandbox.rewrite import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Tuple

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


def _option(args: List[str], name: str) -> Optional[str]:
    for i, word in enumerate(args):
        if word == name and i + 1 < len(args):
            return args[i + 1]
        if word.startswith(name + "="):
            return word[len(name) + 1:]
    return None


def safe(args: List[str], next_step: Optional[str], worker: str = "") -> Tuple[bool, str]:
    """(needs no prompt, why, in plain words) for ``baton ARGS`` while ``next_step`` is NEXT for
    ``worker``. ``once KEY -- CMD`` is not decided here (it is decided as CMD would be)."""
    if not args or args[0] in READING:
        return True, "it only reads the job"
    if args[0] == "record" and len(args) >= 3 and next_step is not None and args[1] == next_step:
        return True, f"it records step {next_step}, the step that is NEXT"
    if args[0] == "record":
        return False, "it records a step that is not NEXT"
    if args[0] in ("claim", "release"):
        other = _option(args, "--worker")
        if other is not None and other != worker:
            return False, f"it acts for worker {other}, not for this session's worker"
        return True, f"it {'takes a ready step' if args[0] == 'claim' else 'gives back the step'} for this worker"
    if args[:2] == ["once", "--settle"]:
        return True, "it records what was checked about a side effect's unknown outcome"
    if args[:1] == ["once"] and (len(args) == 1 or args[1] in ("-h", "--help")):
        return True, "it only shows help"
    return False, f"`baton {args[0]}` is not one of the commands baton runs without asking"


def once_command(args: List[str]) -> Optional[List[str]]:
    """The argv ``baton once KEY [options] -- CMD...`` runs (``None`` when ``args`` is not such a run)."""
    from store.base.once_words import command_start

    start = command_start(args[1:]) if args[:1] == ["once"] else None
    return args[1 + start:] if start is not None else None


def launcher(args: List[str], env: Optional[Mapping[str, str]] = None) -> str:
    """The command that runs ``baton ARGS`` by absolute paths, outside the sandbox, with ``env`` set."""
    python = sys.executable or "/usr/bin/python3"
    assigns = [f"{name}={quote(value)}" for name, value in (env or {}).items()]
    return " ".join([*assigns, *(quote(a) for a in [python, "-I", "-S", LAUNCHER, *args])])


def parts_of(line: str) -> Optional[Tuple[Dict[str, str], List[str]]]:
    """(environment, argv) of a line :func:`launcher` made with this plugin's ``bin/baton``, else ``None``."""
    import shlex

    try:
        words = shlex.split(line)
    except ValueError:
        return None
    env: Dict[str, str] = {}
    while words and words[0].startswith("BATON_ONCE_PREFIX="):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if len(words) < 4 or words[1:4] != ["-I", "-S", LAUNCHER] or not os.path.isabs(words[0]):
        return None
    return env, words


def named(command: str) -> bool:
    """The command can call ``baton`` (the word, not ``.baton/``): only then is a broker started."""
    at = command.find("baton")
    while at >= 0:
        before, after = command[at - 1:at], command[at + 5:at + 6]
        if not (before.isalnum() or before in "_.-" and before) and not (after.isalnum() or after in "_.-" and after):
            return True
        at = command.find("baton", at + 5)
    return False


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
