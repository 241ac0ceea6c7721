"""Whether baton's sandbox can enforce Bash here, and why not: for the brief, ``status`` and the gate.

Kept apart from :mod:`store.gate.enforce` so that a SessionStart, which only says which mode holds,
does not load the Bash gate (the shell reader, the sandbox's arguments, the person's rules).
"""

from __future__ import annotations

import os
import sys

from store.sandbox import claude_settings, probe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

    from store.plan.plan import Plan


class Mode:
    """Where Bash is enforced: ``kernel`` (bubblewrap, at ``bwrap``) or not, and why not; ``tmp``: why
    the sandbox cannot show the host's /tmp through an overlay ('' when it can)."""

    def __init__(self, kernel: bool, why: str = "", bwrap: str = "", tmp: str = "") -> None:
        self.kernel, self.why, self.bwrap, self.tmp = kernel, why, bwrap, tmp

    @property
    def overlay(self) -> bool:
        """/tmp in the sandbox is the host's, with the job's changes on top (else a private one)."""
        return self.kernel and not self.tmp

    def describe(self) -> str:
        if not self.kernel:
            return f"unavailable ({self.why})"
        if self.tmp:
            return f"bubblewrap (enforced by the kernel; /tmp is private, the host's is not shown: {self.tmp})"
        return "bubblewrap (enforced by the kernel)"


def mode_for(plan: Plan, env: Mapping[str, str], person: claude_settings.PersonRules) -> Mode:
    if not plan.sandbox.enabled:
        return Mode(False, "the plan turns it off: sandbox.enabled is false")
    if person.claude_sandbox:
        return Mode(False, "Claude Code's own sandbox is on, and baton's cannot run inside it")
    if not sys.platform.startswith("linux"):
        return Mode(False, f"baton's sandbox needs Linux and bubblewrap; this is {sys.platform}")
    found = probe.bubblewrap(env)
    return Mode(True, bwrap=found.bwrap, tmp=found.tmp) if found.ok else Mode(False, found.why)


def current_mode(plan: Plan, project: str, env: Mapping[str, str]) -> Mode:
    """The mode for ``baton status`` and the brief."""
    return mode_for(plan, env, claude_settings.load(os.path.realpath(project), env))
