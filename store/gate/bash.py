"""The Bash part of the gate: static analysis of a Bash or Monitor command against the step's policy.

A command passes when it writes nothing protected and either the step does not restrict writes,
or it is read-only, or it matches one of the step's ``bash`` patterns (and chains nothing else),
or everything it writes is known and inside the step's ``writes``. A command whose effect cannot
be told (an interpreter, an unknown program, a variable as a target) is denied while writes are
restricted, unless it will run in baton's sandbox (``kernel``), whose mounts then hold the limits:
the reason says so and suggests a ``bash`` pattern; what the sandbox makes writable beyond the step's
globs (``scratch``: the job's /tmp, git's own files, the package caches) counts as the step's. The
job's rules apply in both modes. ``baton`` itself may be run,
except ``approve`` (a person's act) and ``init`` over an existing plan; the command that
``baton once`` runs is checked like any other, and a command matching the plan's ``effects``
must run through ``baton once``.
"""

from __future__ import annotations

import os

from store.base import paths
from store.gate import runners
from store.gate.call import Call, Rules, hard_link, matches_any, mentions_protected, protected, refuse
from store.gate.rules import checks_for
from store.shell import analyse
from store.state import approvals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Tuple

    from store.plan.plan import Plan
    from store.shell import Scan

BATON_READ = ("brief", "status", "log", "verify", "plan", "--help", "--version")
BATON_WRITE = ("record", "once", "claim", "release")


def _subcommand(argv: Sequence[str]) -> str:
    program = os.path.basename(argv[0]) if argv else ""
    words = [a for a in argv[1:] if not a.startswith("-")]
    if program.startswith("python"):
        words = words[1:]  # python3 <root>/store SUBCOMMAND
    return words[0] if words else ""


def _baton_verdict(invocations: Sequence[Tuple[str, ...]], plan: Optional[Plan]) -> Optional[str]:
    for argv in invocations:
        sub = _subcommand(argv)
        if sub == "approve" or (sub != "once" and any("approve" in a.lower() for a in argv[1:3])):
            return refuse("approve", "baton denied `baton approve`: only a person approves a step, by typing "
                                     "/baton:approve STEP in the prompt. Stop and ask them.")
        if sub == "init" and plan is not None:
            return refuse("baton-init", "baton denied `baton init`: this job already has a plan, and changing it is "
                                        "the person's decision. Ask them if the plan needs to change.")
        if sub and sub not in BATON_READ + BATON_WRITE + ("init",):
            return refuse("baton-cmd", f"baton denied `baton {sub}`: not a command the agent may run (use brief, "
                                       "status, log, record, claim, release).")
    return None


def _baton_only(commands: Sequence[str], invocations: Sequence[Tuple[str, ...]]) -> bool:
    return bool(invocations) and len(invocations) == len(commands)


def decide_bash(call: Call, plan: Optional[Plan], rules: Rules, read_only: Optional[Tuple[str, str]],
                kernel: bool = False, scratch: Optional[Callable[[str], bool]] = None) -> Optional[str]:
    """``None`` to let the command run, else the reason to refuse it. ``kernel``: the command will run
    in baton's sandbox, so a command whose effect cannot be told is left to the kernel's limits;
    ``scratch(path)``: that sandbox lets it write ``path`` (resolved) whatever the step's globs say."""
    command = call.input.get("command")
    if not isinstance(command, str) or "\x00" in command:
        return refuse("payload", f"baton denied this {call.tool} call: it has no command string, so it cannot be "
                                 "checked.")
    folded = paths.fold(command)
    if approvals.KEY_NAME in folded or "config/baton" in folded:
        return refuse("key", "baton denied this command: it names baton's approval key, which no tool may read or "
                             "write.")
    result = analyse(command, call.cwd, call.home)
    outputs, unknown_output = runners.outputs(command, call.cwd)  # test runners' report files, beyond pytest's
    verdict = _baton_verdict(result.baton, plan) or _protected_writes(call, (*result.writes, *outputs), plan)
    if verdict:
        return verdict
    opaque = list(result.opaque) + _hidden_effects(call, result)
    writes = [t for t in result.writes if not (scratch and scratch(os.path.realpath(t)))]
    outputs = [t for t in outputs if not (scratch and scratch(os.path.realpath(t)))]
    verdict = job_rules(call, plan, command, result, rules.name)
    if verdict:
        return verdict
    named = mentions_protected(command)
    if opaque and named:
        return refuse("own-files", f"baton denied this command: {named}, and what it does cannot be checked "
                                   f"({opaque[0]}). Use `baton record` to change the ledger.")
    harmless = not opaque and (result.readonly or (
        _baton_only(result.commands, result.baton) and not writes))
    # with the sandbox, what only reading allows runs with nothing writable; `baton once` records outside it
    once = any(_subcommand(argv) == "once" for argv in result.baton)
    if read_only and not harmless and (not kernel or writes or outputs or once):
        return refuse(read_only[0], f"baton denied this command: {read_only[1]} Read-only commands and "
                                    "`baton brief` still work.")
    if rules.tools is not None and call.tool not in rules.tools:  # Bash, or a Monitor's command
        return refuse("tools", f"baton denied {call.tool}: step {rules.name} allows only the tools "
                               f"{', '.join(rules.tools) or '(none)'}.")
    inner = _once_inner(command, result) if plan and plan.effects else ""
    if rules.writes is None or harmless:
        return None
    if matches_any(command, rules.bash) or (inner and matches_any(inner, rules.bash)):
        # the person allowed this command (or the one a lone `baton once` runs); what it names still counts
        return _outside_writes(call, rules, (*writes, *outputs), () if kernel or not unknown_output else
                               ("a test runner's output option is not a plain path",))
    return _outside_writes(call, rules, (*writes, *outputs), () if kernel else opaque)


def _once_inner(command: str, result: Scan) -> str:
    from store.gate.rules import effects

    return effects.lone_once_inner(command, result)


def _protected_writes(call: Call, writes: Sequence[str], plan: Optional[Plan]) -> Optional[str]:
    for target in writes:
        real = os.path.realpath(target)
        found = protected(call, real, os.path.normpath(target), plan) or hard_link(call, real, plan)
        if found:
            return refuse(found[0], f"baton denied this command: it writes {call.shown(target)}, and {found[1]}. "
                                    "Record progress with `baton record STEP STATUS NOTE` instead.")
    return None


def _hidden_effects(call: Call, result: Scan) -> List[str]:
    """What the scan could not know: writes through a link the command itself makes, and a PATH
    that lets a file in the project stand in for a program."""
    out = []
    links = [(link, os.path.realpath(link)) for link in result.links]
    for target in result.writes:
        real = os.path.realpath(target)
        for link, link_real in links:
            if real != link_real and paths.under(real, link_real):
                out.append(f"it writes {call.shown(target)} through {call.shown(link)}, which it makes a link or moves")
                break
    for entry in (call.env.get("PATH") or "/usr/bin").split(os.pathsep):  # unset: bash's default, system folders
        if not os.path.isabs(entry) or paths.under(paths.real(entry), call.project):
            out.append(f"PATH holds {entry or '.'}, a folder in the project, so a program name may run a file there")
            break
    return out


def job_rules(call: Call, plan: Optional[Plan], command: str, result: Scan, step: str = "?") -> Optional[str]:
    """The plan's rules, each kind by its module in ``store.gate.rules`` (deny_bash, effects: only through
    ``baton once``, ``step`` naming the key it suggests; protect_branches, deny_content, allow_hosts and the
    count of operations that leave the machine, kept on ``call.external`` for ``limits.external_ops``)."""
    if plan is None:
        return None
    for check in checks_for(plan, "bash"):
        verdict = check(call, plan, command, result, step)
        if verdict:
            return verdict
    return None


def _outside_writes(call: Call, rules: Rules, writes: Sequence[str], opaque: Sequence[str]) -> Optional[str]:
    outside = [t for t in writes if not paths.allowed(os.path.realpath(t), call.project, call.home, rules.writes or ())]
    if not outside and not opaque:
        return None
    inside = "Write/Edit inside those paths, " if rules.writes else ""
    advice = (f"Use read-only commands, {inside}or ask the person to add a `bash` pattern for this command to the "
              "step.")
    if outside:
        shown = ", ".join(call.shown(t) for t in outside[:3]) + (" outside them" if rules.writes else "")
        return refuse("writes", f"baton denied this command: step {rules.name} {rules.may_write}, and it "
                                f"writes {shown}. {advice}")
    return refuse("unknown-effect", f"baton denied this command: step {rules.name} {rules.may_write}, and "
                                    f"baton cannot tell what it writes ({'; '.join(opaque[:2])}). {advice}")
