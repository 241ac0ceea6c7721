"""deny_bash: does a rule's command pattern match what a Bash command runs?

A pattern (``fnmatch``, e.g. ``git push*``) is matched against each simple command the shell
scan resolved, as its words joined by one space: quotes, escapes, wrappers (``sudo``, ``env``,
``timeout``, ``xargs``, ``find -exec`` ...), ``sh -c``/``eval`` bodies and program paths
(``/usr/bin/git``) are resolved first, so ``g''it p\\ush`` is ``git push``. A command with a
word known only at run time is refused when the pattern could match for some value of it
(``git $cmd``, ``xargs git``, ``$CMD push``, ``eval "$X"``), file name patterns being expanded
first as bash would expand them unless the command itself makes files; a program that runs code baton
cannot read (an interpreter, a script, an unknown program) is refused when its words name the
pattern's program. A pattern holding a shell operator (``curl * | sh*``) is matched against the
whole command, whitespace collapsed, as in baton 0.1.0.
"""

from __future__ import annotations

from store.base import wild
from store.gate.call import refuse
from store.plan.rules import of_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

    from store.gate.call import Call
    from store.plan.plan import Plan
    from store.shell import Invocation, Scan

_OPERATORS = frozenset("|;&<>")
_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-")


def bash(call: Call, plan: Plan, command: str, scan: Scan, step: str) -> Optional[str]:
    """The refusal for the first ``deny_bash`` rule the command breaks, or None."""
    for rule in of_kind(plan.rules, "deny_bash"):
        how = hit(rule.value, command, scan)
        if how:
            detail = f": {rule.reason}" if rule.reason else ""
            return refuse("rule", f"baton denied this command: the job's rule `{rule.value}` forbids it{detail} "
                                  f"({how}).")
    return None


def hit(pattern: str, command: str, scan: Scan) -> Optional[str]:
    """How ``command`` matches ``pattern`` (a phrase for the refusal), or None."""
    if not _OPERATORS.isdisjoint(pattern):
        flat = " ".join(command.split())
        return f"`{flat[:80]}` matches it" if wild.fnmatchcase(flat, pattern) else None
    program = program_of(pattern)
    alone = len(scan.invocations) == 1  # its patterns expand before it runs: its own effects come later
    stable = (alone or not (scan.writes or scan.links or scan.opaque)) and not any(
        inv.program in ("shopt", "set") for inv in scan.invocations)
    for inv in scan.invocations:
        found = invocation_hit(pattern, program, expand_globs(inv) if stable else inv)
        if found:
            return found
    return None


def expand_globs(inv: Invocation) -> Invocation:
    """``inv`` with its file name patterns expanded as bash expands them now (a pattern matching
    nothing stays as written), when the folder it runs in is known. Only for a command that makes
    no file before ``inv`` runs: one that does could create a name (``--force``) first."""
    if inv.resolved or len(inv.cwds) != 1 or inv.cwds[0] is None:
        return inv
    if any(word is None and pattern is None for word, pattern in zip(inv.argv, inv.globs)):
        return inv
    cwd = str(inv.cwds[0])
    argv: List[Optional[str]] = []
    for word, pattern in zip(inv.argv, inv.globs):
        if word is not None or pattern is None:
            argv.append(word)
            continue
        argv.extend(sorted(wild.glob(pattern, cwd)) or [pattern])
    return type(inv)(tuple(argv), inv.cwds, inv.runner)


def invocation_hit(pattern: str, program: Optional[str], inv: Invocation) -> Optional[str]:
    """How one resolved simple command matches ``pattern`` (whose literal program is ``program``), or None."""
    if inv.resolved:
        text = " ".join(str(w) for w in inv.argv)
        if wild.fnmatchcase(text, pattern):
            return f"it runs `{text[:80]}`"
    elif could_match(inv.argv, pattern):
        shown = " ".join("<computed>" if w is None else w for w in inv.argv)[:80]
        return f"it runs `{shown}`, which baton cannot resolve and which may be a command the rule forbids"
    if inv.runner and program is not None:
        for word in inv.argv:
            if word is not None and program in tokens(word):
                shown = " ".join(str(w) for w in inv.argv)[:80]
                return f"it runs `{shown}`, code baton cannot read that names {program}"
    return None


def program_of(pattern: str) -> Optional[str]:
    """The literal program a pattern names (``git`` in ``git push*``), or None (``*push*``)."""
    first = pattern.split(" ", 1)[0]
    return None if not first or wild.has_magic(first) else first.rsplit("/", 1)[-1]


def could_match(argv: Tuple[Optional[str], ...], pattern: str) -> bool:
    """Some value of the unknown words (each may expand to any text, or to several words) makes the
    command match ``pattern``: the literal text before the first unknown word must agree with the
    pattern's literal text before its first wildcard (one a prefix of the other)."""
    known = []
    for word in argv:
        if word is None:
            break
        known.append(word)
    prefix = " ".join(known) + (" " if known else "")
    literal = pattern[: min((i for i, c in enumerate(pattern) if c in wild.MAGIC), default=len(pattern))]
    return prefix.startswith(literal) or literal.startswith(prefix)


def tokens(word: str) -> List[str]:
    """The runs of ``[A-Za-z0-9_.+-]`` in ``word``: the names a program's text may hold."""
    found: List[str] = []
    start = -1
    for i, c in enumerate(word):
        if c in _TOKEN:
            if start < 0:
                start = i
        elif start >= 0:
            found.append(word[start:i])
            start = -1
    if start >= 0:
        found.append(word[start:])
    return found
