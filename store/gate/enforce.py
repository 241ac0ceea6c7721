"""How a Bash call goes on while a job is active: refused, or handed back to run in baton's sandbox.

The sandbox honours the plan's rules: the files ``deny_content`` covers are read-only in it like
``protect`` paths, and ``allow_hosts`` turns its network into the proxy's allowlist
(:func:`network_for`). Order: the static gate (:func:`store.gate.bash.decide_bash`: baton's files, the job's rules,
waiting, limits, known writes outside the step); the person's own Claude Code rules on the
original command (:mod:`store.gate.permissions`); the count of operations that leave the machine
(``limits.external_ops``); then ``allow`` or ``ask`` with ``updatedInput``,
the command rewritten to run in the sandbox (never ``updatedInput`` alone: Claude Code would check
its rules on the rewrite). A plain ``baton`` command runs outside, by absolute paths; the command
a ``baton once`` runs is started by it inside the sandbox (``BATON_ONCE_PREFIX``), and is decided
as that command would be. A command that names ``baton`` starts its sandbox through a broker
(:mod:`store.gate.broker`) that carries its ``baton`` calls out, each judged here as if alone. Where no
sandbox can run, the static gate alone decides and Claude Code's own prompts follow unchanged.
"""

from __future__ import annotations

import os
import sys

from store.gate import baton_calls, permissions
from store.gate.bash import decide_bash
from store.gate.call import Call, Rules, refuse
from store.plan.hosts import host_policy
from store.plan.rules import read_only_globs
from store.sandbox import bwrap_args, claude_settings, rewrite, runs
from store.sandbox.mode import Mode, mode_for
from store.state import approvals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

    from store.plan.plan import Plan, Step
    from store.plan.sandbox_settings import SandboxSettings
    from store.state.job import Job

NOT_COVERED = "not covered by your allow rules"
TEST_CACHES = (".pytest_cache/**", ".mypy_cache/**", ".ruff_cache/**", ".hypothesis/**", ".tox/**", ".nox/**",
               ".coverage", ".coverage.*", "node_modules/.cache/**", "target/**")


def _answer(decision: str, reason: str, command: Optional[str] = None,
            tool_input: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    specific: Dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                "permissionDecisionReason": reason}
    if command is not None:
        specific["updatedInput"] = {**(tool_input or {}), "command": command}
    return {"hookSpecificOutput": specific}


def step_writes(plan: Plan, step: Optional[Step], rules: Rules, read_only: bool) -> Optional[Tuple[str, ...]]:
    """What a sandboxed command may write in this step: ``None`` for the whole project."""
    if read_only:
        return ()
    writes = rules.writes
    if writes is None:
        return None
    extra = plan.sandbox.extra_writes if writes else ()
    caches = TEST_CACHES if step is not None and step.phase == "validated" else ()
    return (*writes, *extra, *caches)


def never_writable(plan: Plan) -> Tuple[str, ...]:
    """What no sandboxed command may write beyond baton's own files: the plan's ``protect`` globs and
    the files a ``deny_content`` rule covers (Bash cannot show what it would write into them)."""
    return tuple(dict.fromkeys((*plan.protect, *read_only_globs(plan.rules))))


def network_for(plan: Plan, settings: SandboxSettings, read_only: bool) -> bwrap_args.Network:
    """``host``, ``none``, or the allowlist: groups of host patterns, a host allowed when every group
    has a pattern for it (the step's ``sandbox.network.allow_hosts``, then each ``allow_hosts`` rule)."""
    if read_only:
        return "none"  # only reading: nothing leaves the machine either
    wanted = settings.network_mode
    hosts = host_policy(plan.rules)
    if hosts is None or wanted == "none":
        return (tuple(wanted),) if isinstance(wanted, tuple) else wanted
    groups = [] if wanted == "host" else [tuple(wanted)]
    return tuple([*groups, *(tuple(rule.value) for rule in hosts.rules)])


def policy_for(call: Call, job: Job, rules: Rules, read_only: bool, host_tmp: bool = False) -> bwrap_args.Policy:
    step = job.next
    settings: SandboxSettings = job.plan.sandbox.for_step(step.sandbox if step else None)
    writes = step_writes(job.plan, step, rules, read_only)
    git = settings.git_mode if rules.writes is None or (rules.writes and not read_only) else "ro"
    return bwrap_args.Policy(call.project, job.layout.state_dir, approvals.key_dir(call.env), call.home, writes,
                          never_writable(job.plan), git, network_for(job.plan, settings, read_only), settings.caches,
                          disable_userns=settings.disable_userns, host_tmp=host_tmp)


def shown(command: str, limit: int = 200) -> str:
    """The model's command as a reason leads with it: in backticks, cut at ``limit`` characters."""
    return f"`{command[:limit]}{'...' if len(command) > limit else ''}`"


def plain(verdict: permissions.Verdict) -> str:
    """Why a person is asked, in plain words."""
    if verdict.by_rule or verdict.why == NOT_COVERED:
        return verdict.why if verdict.by_rule else f"it is {NOT_COVERED}"
    return f"it is {NOT_COVERED} (which baton cannot check on it: {verdict.why})"


def _once_verdict(call: Call, job: Job, inner: List[str], payload: Mapping[str, Any],
                  kernel: bool) -> permissions.Verdict:
    """allow, ask or deny, and why, for ``baton once`` running ``inner``: decided as ``inner`` itself
    would be, under the person's rules and, where it runs in the sandbox, ``sandbox.auto_allow``."""
    text = " ".join(rewrite.quote(a) if not a or any(c in a for c in " '\"$`\\;&|<>()*?[]{}~#") else a
                    for a in inner)
    person = claude_settings.load(call.project, call.env)
    verdict = permissions.judge(text, str(payload.get("permission_mode") or "default"), person, call.cwd,
                                call.project, call.home)
    if verdict.decision == "ask" and not verdict.by_rule and kernel and job.plan.sandbox.auto_allow:
        return permissions.Verdict("allow", "the plan allows every sandboxed command (sandbox.auto_allow)")
    if verdict.decision == "allow":
        return verdict
    why = plain(verdict) if verdict.decision == "ask" else verdict.why
    return permissions.Verdict(verdict.decision, f"its command `{text[:200]}`: {why}", verdict.by_rule)


def trusted_baton(call: Call, job: Job, payload: Mapping[str, Any],
                  kernel: bool) -> Callable[[List[str]], Optional[str]]:
    """For the person's rules on a whole command: a ``baton`` call that needs no prompt on its own
    (given its words after ``baton``) is as allowed inside a chain; why, or ``None``."""
    def check(args: List[str]) -> Optional[str]:
        inner = baton_calls.once_command(args)
        ok, why = (_once_verdict(call, job, inner, payload, kernel).decision == "allow", "") if inner is not None \
            else baton_calls.safe(args, job.next.id if job.next else None, job.worker)
        return f"baton's own `baton {' '.join(args[:1])}`" + (f" ({why})" if why else "") if ok else None

    return check


def _baton_call(call: Call, args: list, job: Job, verdict: permissions.Verdict,  # type: ignore[type-arg]
                read_only: bool, mode: Mode, payload: Mapping[str, Any]) -> Dict[str, Any]:
    command = str(call.input.get("command"))
    inner = baton_calls.once_command(args)
    if inner is not None:
        decided = _once_verdict(call, job, inner, payload, mode.kernel)
        if decided.decision == "deny":
            return _answer("deny", refuse("claude-rule", f"baton denied this command: {decided.why}."))
        ok, why = decided.decision == "allow", decided.why
    else:
        ok, why = baton_calls.safe(args, job.next.id if job.next else None, job.worker)
    # once: its command decides (the person's rules for it included); else a rule allowing it, or baton
    allow = (ok or (verdict.decision == "allow" and inner is None)) and not verdict.by_rule
    if verdict.by_rule or (allow and not ok):  # the person's own rule decides, and says why
        why = verdict.why
    env = {}
    ran = "runs outside baton's sandbox, by baton's own path"
    if mode.kernel and inner is not None:  # baton once records outside; the command it runs, inside
        policy, rid, files, built = _prepare(call, job, read_only, payload, mode, asked=not allow)
        launch = built.launch(_starter(policy, rid, mode.bwrap))
        prefix = [*launch, *built.args, "--chdir", call.cwd, "--", "/bin/bash", "-c", rewrite.ONCE_INNER, "bash"]
        rewrite.write_args(files["args"], prefix)
        env["BATON_ONCE_PREFIX"] = files["args"]
        ran = "records its run outside baton's sandbox and runs its command once, inside it"
    reason = f"{shown(command)} {ran}: {why}." if allow else f"{shown(command)}: baton asks you first: {why}."
    return _answer("allow" if allow else "ask", reason, baton_calls.launcher(args, env), call.input)


def _prepare(call: Call, job: Job, read_only: bool, payload: Mapping[str, Any], mode: Mode,
             asked: bool = False) -> Tuple[
        bwrap_args.Policy, str, Dict[str, str], bwrap_args.Built]:
    """The sandbox for this call: its policy, run id, run files and bwrap's arguments, its run recorded
    (``asked``: Claude Code asks the person first, so it is not running until they allow it)."""
    policy = policy_for(call, job, Rules(job.next), read_only, mode.overlay)
    state_dir = job.layout.state_dir
    rid = runs.run_id(payload.get("tool_use_id"))
    files = runs.paths(state_dir, rid)
    built = bwrap_args.build(policy, files["lock"], rid)
    record = {"command": str(call.input.get("command")), "tmp_writes": _tmp_writes(call),
              "step": job.next.id if job.next else "",
              "background": call.tool == "Monitor" or bool(call.input.get("run_in_background")),
              **({"asked": True} if asked else {}), **built.after_check(policy)}
    runs.start(state_dir, rid, record)
    return policy, rid, files, built


def _tmp_writes(call: Call) -> List[str]:
    """The files the command names to write under /tmp or /var/tmp: after it, the model is told where the
    Read tool finds them (:func:`store.sandbox.afterrun.scratch_note`)."""
    command = str(call.input.get("command"))
    if "tmp" not in command:
        return []
    from store.shell import analyse  # read already by the gate; again only for a command that names tmp

    found = (os.path.normpath(os.path.join(call.cwd, t)) for t in analyse(command, call.cwd, call.home).writes)
    return [p for p in found if p.startswith(("/tmp/", "/var/tmp/"))]


def bash(call: Call, job: Job, read_only: Optional[Tuple[str, str]], payload: Mapping[str, Any],
         parking: bool = False) -> Optional[Dict[str, Any]]:
    """The PreToolUse answer for a Bash call, or a Monitor's command (a background Bash command to Claude
    Code, rewritten the same way), while ``job`` is active (``None``: say nothing).
    ``parking``: a refusal will be turned into a parked call (:mod:`store.gate.parking`), so while
    only reading is allowed every command not known to only read is refused, not left to run in a
    read-only sandbox where it would fail instead of waiting for the approval."""
    command = str(call.input.get("command"))
    person = claude_settings.load(call.project, call.env)
    mode = mode_for(job.plan, call.env, person)
    rules = Rules(job.next)
    if mode.kernel and rules.writes is not None:  # the sandbox's extra writable paths count as the step's
        rules.writes = step_writes(job.plan, job.next, rules, False)
    kernel = mode.kernel and not (parking and read_only)
    scratch: Optional[Callable[[str], bool]] = None
    if kernel:  # what its sandbox will let the command write beyond the step's globs counts as the step's
        scratch = bwrap_args.Scratch(policy_for(call, job, Rules(job.next), read_only is not None, mode.overlay))
    refused = decide_bash(call, job.plan, rules, read_only, kernel=kernel, scratch=scratch)
    if refused:
        return _answer("deny", refused)
    verdict = permissions.judge(command, str(payload.get("permission_mode") or "default"), person.for_tool(call.tool),
                                call.cwd, call.project, call.home, trusted_baton(call, job, payload, mode.kernel))
    if verdict.decision == "deny":
        return _answer("deny", refuse("claude-rule", f"baton denied this command: {verdict.why}."))
    if call.external:  # it sends data out: counted now that baton lets it through (limits.external_ops)
        from store.gate.policy import count_external

        over = count_external(job, call)
        if over:
            return _answer("deny", over)
    args = baton_calls.invocation(command)
    if args is not None:
        return _baton_call(call, args, job, verdict, read_only is not None, mode, payload)
    if not mode.kernel:
        if job.plan.sandbox.require:
            return _answer("deny", refuse("sandbox", f"baton denied this command: this job requires baton's "
                                                     f"sandbox, which cannot run here ({mode.why}). Tell the person."))
        return None
    return _sandboxed(call, job, read_only is not None, verdict, mode, payload)


def _sandboxed(call: Call, job: Job, read_only: bool, verdict: permissions.Verdict, mode: Mode,
               payload: Mapping[str, Any]) -> Dict[str, Any]:
    command = str(call.input.get("command"))
    decision = verdict.decision
    if decision == "ask" and not verdict.by_rule and job.plan.sandbox.auto_allow:
        decision, why = "allow", "the plan allows every sandboxed command (sandbox.auto_allow)"
    else:
        why = verdict.why
    policy, rid, files, built = _prepare(call, job, read_only, payload, mode, asked=decision == "ask")
    launch = built.launch(_starter(policy, rid, mode.bwrap))  # the job's /tmp first, then the scope or proxy, bwrap
    args = built.args
    if baton_calls.named(command):  # its `baton` calls reach the job through a broker outside the sandbox
        from store.gate import broker_context

        approved = broker_context.visible_calls(command, call.cwd, call.home) if decision == "ask" else []
        broker_context.write_context(files, rid, {"project": call.project, "state_dir": job.layout.state_dir}, payload,
                             call.env, approved)
        launch = [*broker_context.launch(files["broker"]), *launch]
        args = [*args, "--setenv", broker_context.ENV, files["socket"]]
    rewrite.write_args(files["args"], args)
    rewrite.write_script(files["script"], launch, files["args"], files["started"])
    where = bwrap_args.summary(policy)
    why = plain(verdict) if decision == "ask" else why
    why += "".join(f"; note: {note}" for note in built.notes[:2])  # a glob that could not become a mount
    reason = (f"{shown(command, 300)} runs in baton's sandbox, where it may write {where['writes']} "
              f"(git: {where['git']}): {why}." if decision == "allow" else
              f"{shown(command, 300)}: baton asks you before running it in its sandbox, where it may write "
              f"{where['writes']} (git: {where['git']}): {why}.")
    return _answer(decision, reason, rewrite.sandboxed(command, files["script"]), call.input)


def _starter(policy: bwrap_args.Policy, rid: str, bwrap: str) -> Tuple[str, ...]:
    """What starts bwrap: the allowlisting proxy, the abstract-socket scope (host network), or nothing."""
    from store.sandbox import landlock_scope

    if landlock_scope.wanted(policy.network):
        return (*landlock_scope.launch(), bwrap)
    return _proxy(policy, rid, bwrap) or (bwrap,)


def _proxy(policy: bwrap_args.Policy, rid: str, bwrap: str) -> Tuple[str, ...]:
    """The command line of the allowlisting proxy for a network allowlist (``()`` otherwise)."""
    if not isinstance(policy.network, tuple):
        return ()
    import zlib

    name = f".baton-proxy-{zlib.crc32(rid.encode('utf-8', 'surrogateescape')):08x}.sock"  # short: sockets have ~100
    here = os.path.join(os.path.dirname(os.path.abspath(rewrite.__file__)), "netproxy.py")  # beside it
    outside = os.path.join(policy.tmp_outside, name)  # made after the overlay is mounted: the launcher starts first
    return (sys.executable or "/usr/bin/python3", "-I", "-S", here, outside, f"/tmp/{name}", bwrap,
            *(",".join(group) for group in policy.network), "--")


def validate_sandbox(job: Job, step: Step, env: Mapping[str, str]) -> Optional[Tuple[str, bwrap_args.Policy]]:
    """(bwrap, policy) to run ``step``'s ``validate`` command in, or ``None`` where no sandbox runs.

    The command runs tests the model wrote, so it gets the step's writes and the test caches, and git
    read-only, like the validated phase's test runners in Bash."""
    project = job.layout.project_dir
    mode = mode_for(job.plan, env, claude_settings.load(os.path.realpath(project), env))
    if not mode.kernel:
        return None
    rules = Rules(step)
    writes = None if rules.writes is None else (*rules.writes, *job.plan.sandbox.extra_writes, *TEST_CACHES)
    settings = job.plan.sandbox.for_step(step.sandbox)
    home = env.get("HOME") or os.path.expanduser("~")
    return mode.bwrap, bwrap_args.Policy(project, job.layout.state_dir, approvals.key_dir(env), home, writes,
                                      never_writable(job.plan), "ro", network_for(job.plan, settings, False),
                                      settings.caches, disable_userns=settings.disable_userns, host_tmp=mode.overlay)
