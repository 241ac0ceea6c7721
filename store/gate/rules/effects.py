"""The plan's ``effects``: side effects that may only run through ``baton once``.

A Bash command whose resolved simple commands (see ``store.gate.rules.deny_bash``) match one of the
plan's ``effects`` patterns is refused unless that very command is the one a ``baton once`` in it
wraps; the refusal shows the wrapped form, so a resumed session never does the side effect twice.
"""

from __future__ import annotations

import os

from store.base.regex import lazy
from store.gate.call import chains, refuse
from store.gate.rules import deny_bash

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Optional, Sequence, Tuple

    from store.gate.call import Call
    from store.plan.plan import Plan
    from store.shell import Scan

ONCE = lazy(r"(?:\S*/)?baton\s+once\s|python\S*\s+\S*store/?\s+once\s")


def once_inner(argv: Sequence[str]) -> str:
    """The command a ``baton once`` invocation (``("baton", "once", KEY, ...)``) runs, as text;
    empty for ``--settle`` and ``--help``, which run nothing."""
    from store.base.once_words import command_start

    start = command_start(argv[2:]) if len(argv) >= 3 and argv[1] == "once" else None
    return " ".join(argv[2 + start:]) if start is not None else ""


def lone_once_inner(command: str, scan: Scan) -> str:
    """The command a lone ``baton once`` runs, for matching the step's ``bash`` patterns."""
    if len(scan.baton) != 1 or not ONCE.match(" ".join(command.split())) or chains(command):
        return ""
    return once_inner(scan.baton[0])


def bash(call: Call, plan: Plan, command: str, scan: Scan, step: str) -> Optional[str]:
    """The refusal for a side effect run without ``baton once`` (showing the form to run, with a key
    named after ``step``), or None."""
    effect = unwrapped(scan, plan.effects)
    return reason(effect[0], effect[1], step) if effect else None


def unwrapped(scan: Scan, effects: Sequence[str]) -> Optional[Tuple[str, str]]:
    """(what runs, the pattern) for the first simple command matching an ``effects`` pattern that
    is not run by a ``baton once`` of the same command."""
    wrapped: Dict[str, int] = {}  # each lone `baton once CMD` covers one CMD
    for argv in scan.baton:
        inner = once_inner(argv)
        wrapped[inner] = wrapped.get(inner, 0) + 1
    for inv in scan.invocations:
        if inv.program is not None and os.path.basename(inv.program) == "baton":
            continue
        text = " ".join("<computed>" if w is None else w for w in inv.argv)
        if inv.resolved and wrapped.get(text, 0) > 0:
            wrapped[text] -= 1
            continue
        for pattern in effects:
            if deny_bash.invocation_hit(pattern, deny_bash.program_of(pattern), inv):
                return _shown(inv.argv), pattern
    return None


def _shown(argv: Sequence[Optional[str]]) -> str:
    """The command as one would type it again: each word quoted where the shell needs it."""
    from shlex import quote

    return " ".join("<computed>" if w is None else quote(w) for w in argv)


def reason(text: str, pattern: str, step: str) -> str:
    import re  # only for a refusal

    slug = "-".join(re.sub(r"[^a-z0-9]+", "-", w.lower()).strip("-") for w in text.split()[:3]).strip("-")
    key = f"{step}-{slug}"[:60] if step != "?" else slug[:60]
    return refuse("once", f"baton denied this command: `{text[:200]}` is a side effect this job runs only through "
                          f"`baton once` (the plan's effects pattern `{pattern}`), so that a resumed session never "
                          f"does it twice. Run it as: baton once {key} -- {text[:200]}  (the KEY names this one "
                          "operation: the same KEY never runs twice, a different operation needs its own KEY).")
