"""The Bash part of the gate: static analysis of the command against the step's policy.

A command passes when it writes nothing protected and either the step does not restrict writes,
or it is read-only, or it matches one of the step's ``bash`` patterns (and chains nothing else),
or everything it writes is known and inside the step's ``writes``. A command whose effect cannot
be told (an interpreter, an unknown program, a variable as a target) is denied while writes are
restricted: the reason says so and suggests a ``bash`` pattern. ``baton`` itself may be run,
except ``approve`` (a person's act) and ``init`` over an existing plan.
"""

from __future__ import annotations

import fnmatch
import os
import re

from store.base import paths as scope
from store.gate import runners
from store.gate.call import Call, Rules, matches_any, mentions_protected, protected, refuse
from store.shell import analyse
from store.state import approvals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence, Tuple

    from store.state.plan import Plan

BATON_READ = ("brief", "status", "log", "verify", "plan", "--help", "--version")
BATON_WRITE = ("record",)
# A rule applies to each command of a chain, also inside ( ), { }, $( ), backquotes and after if/then/do
SEGMENTS = re.compile(r"[;&|\n\r(){}`]+|\$\(")
KEYWORDS = re.compile(r"^(?:(?:if|then|else|elif|do|while|until|time|!)\s+)+")
# words that run the command after them: a rule about `git push` also holds for `sudo git push`
WRAPPERS = re.compile(
    r"^(?:(?:\w+=\S*|sudo(?:\s+-\S+)*|command|builtin|exec|nohup|time|stdbuf(?:\s+-\S+)*|nice(?:\s+-n\s*\S+|\s+-\S+)*"
    r"|env(?:\s+-\S+|\s+\w+=\S*)*|timeout(?:\s+-\S+)*\s+\S+|xargs(?:\s+-\S+)*)\s+)+")


def _subcommand(argv: Sequence[str]) -> str:
    program = os.path.basename(argv[0]) if argv else ""
    words = [a for a in argv[1:] if not a.startswith("-")]
    if program.startswith("python"):
        words = words[1:]  # python3 <root>/store SUBCOMMAND
    return words[0] if words else ""


def _rule_hit(command: str, pattern: str) -> bool:
    pieces = [" ".join(p.split()) for p in (command, *SEGMENTS.split(command))]
    bare = [WRAPPERS.sub("", KEYWORDS.sub("", p, count=1), count=1) for p in pieces]
    return any(fnmatch.fnmatchcase(p, pattern) for p in (*pieces, *bare) if p)


def _baton_verdict(invocations: Sequence[Tuple[str, ...]], plan: Optional[Plan]) -> Optional[str]:
    for argv in invocations:
        sub = _subcommand(argv)
        if sub == "approve" or any("approve" in a.lower() for a in argv[1:3]):
            return refuse("approve", "baton denied `baton approve`: only a person approves a step, by typing "
                                     "/baton:approve STEP in the prompt. Stop and ask them.")
        if sub == "init" and plan is not None:
            return refuse("baton-init", "baton denied `baton init`: this job already has a plan, and changing it is "
                                        "the person's decision. Ask them if the plan needs to change.")
        if sub and sub not in BATON_READ + BATON_WRITE + ("init",):
            return refuse("baton-cmd", f"baton denied `baton {sub}`: not a command the agent may run (use brief, "
                                       "status, log, record).")
    return None


def _baton_only(commands: Sequence[str], invocations: Sequence[Tuple[str, ...]]) -> bool:
    return bool(invocations) and len(invocations) == len(commands)


def decide_bash(call: Call, plan: Optional[Plan], rules: Rules,
                read_only: Optional[Tuple[str, str]], kernel: bool = False) -> Optional[str]:
    """``None`` to let the command run, else the reason to refuse it. ``kernel``: the command will run
    in baton's sandbox, so a command whose effect cannot be told is left to the kernel's limits."""
    command = call.input.get("command")
    if not isinstance(command, str) or "\x00" in command:
        return refuse("payload", "baton denied this Bash call: it has no command string, so it cannot be checked.")
    for rule in plan.rules if plan else ():
        if _rule_hit(command, rule.deny_bash):
            detail = f": {rule.reason}" if rule.reason else ""
            return refuse("rule", f"baton denied this command: the job's rule `{rule.deny_bash}` forbids it{detail}.")
    folded = scope.fold(command)
    if approvals.KEY_NAME in folded or "config/baton" in folded:
        return refuse("key", "baton denied this command: it names baton's approval key, which no tool may read or "
                             "write.")
    result = analyse(command, call.cwd, call.home)
    verdict = _baton_verdict(result.baton, plan)
    if verdict:
        return verdict
    outputs, unknown_output = runners.outputs(command, call.cwd)
    for target in (*result.writes, *outputs):
        found = protected(call, os.path.realpath(target), os.path.normpath(target), plan)
        if found:
            return refuse(found[0], f"baton denied this command: it writes {call.shown(target)}, and {found[1]}. "
                                    "Record progress with `baton record STEP STATUS NOTE` instead.")
    named = mentions_protected(command)
    if result.opaque and named:
        return refuse("own-files", f"baton denied this command: {named}, and what it does cannot be checked "
                                   f"({result.opaque[0]}). Use `baton record` to change the ledger.")
    harmless = result.readonly or (
        _baton_only(result.commands, result.baton) and not result.writes and not result.opaque)
    if read_only and (result.writes or outputs if kernel else not harmless):  # the sandbox then runs it read-only
        return refuse(read_only[0], f"baton denied this command: {read_only[1]} Read-only commands and "
                                    "`baton brief` still work.")
    if rules.tools is not None and "Bash" not in rules.tools:
        return refuse("tools", f"baton denied Bash: step {rules.name} allows only the tools "
                               f"{', '.join(rules.tools) or '(none)'}.")
    if rules.writes is None or harmless:
        return None
    if matches_any(command, rules.bash):  # a step's own pattern: what its options name is still a write
        return _outside_writes(call, rules, outputs, () if kernel or not unknown_output else
                               ("a test runner's output option is not a plain path",))
    return _outside_writes(call, rules, result.writes, () if kernel else result.opaque)


def _outside_writes(call: Call, rules: Rules, writes: Sequence[str], opaque: Sequence[str]) -> Optional[str]:
    outside = [t for t in writes if not scope.allowed(os.path.realpath(t), call.project, call.home, rules.writes or ())]
    if not outside and not opaque:
        return None
    allowed = ", ".join(rules.writes or ()) or "nothing"
    advice = ("Use read-only commands, Write/Edit inside those paths, or ask the person to add a `bash` pattern for "
              "this command to the step.")
    if outside:
        return refuse("writes", f"baton denied this command: step {rules.name} may write only {allowed}, and it "
                                f"writes {', '.join(call.shown(t) for t in outside[:3])} outside them. {advice}")
    return refuse("unknown-effect", f"baton denied this command: step {rules.name} may write only {allowed}, and "
                                    f"baton cannot tell what it writes ({'; '.join(opaque[:2])}). {advice}")
