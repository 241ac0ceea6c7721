"""The PreToolUse decision: may this tool call run while the job's NEXT step is what it is?

``decide`` returns ``None`` to let Claude Code's own permission flow go on, or a reason to deny,
written for the model: what was refused, why, what it may do instead, and ``[baton:CODE]``.
Order of checks: unknown payload shape; baton's own files and the plan's ``protect`` globs
(always); the job's ``rules``; ``baton`` subcommands; a step waiting for a person's approval or a
job limit (reading only, :func:`read_only_reason`); the step's ``tools``; the step's ``writes``
(Write/Edit/NotebookEdit by path in ``files``, Bash and a Monitor's command by static analysis in
``bash``). Read, Grep and Glob never reach the approval key (``reads``); PowerShell, a Monitor
that is not a command, the worktree tools and Workflow are judged in ``shells``. WebFetch, MCP tools and
a Monitor's WebSocket are judged by ``allow_hosts`` (``egress``); a call that passes and sends
data out is counted by :func:`count_external` toward ``limits.external_ops``. Which tools reach
the gate at all is ``store.gate.toolset``'s table.
"""

from __future__ import annotations

import os

from store.base import paths
from store.gate import shells, toolset
from store.gate.call import WRITE_TOOLS, Call, Rules, refuse, tools_check
from store.gate.files import decide_write
from store.gate.reads import decide_file_url, decide_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Sequence, Tuple

    from store.plan.plan import Plan, Step
    from store.state.job import Job

SCHEDULERS = ("CronCreate", "ScheduleWakeup")
PERSON_COMMANDS = ("record", "approve", "plan")  # store.cli.prompt's commands that change the job


def decide(call: Call, plan: Optional[Plan], next_step: Optional[Step],
           read_only: Optional[Tuple[str, str]]) -> Optional[str]:
    """``None`` to allow, else the reason to deny. ``read_only``: (code, why) when only reading is
    allowed now (NEXT waits for a person's approval, a job limit is reached), or ``None``."""
    rules = Rules(next_step)
    if call.tool in WRITE_TOOLS:
        return decide_write(call, plan, rules, read_only)
    if call.tool in toolset.SHELLS:
        if call.tool == "Bash" or toolset.command_of(call.tool, call.input) is not None:
            from store.gate.bash import decide_bash

            return decide_bash(call, plan, rules, read_only)
        url = shells.socket_url(call)
        if url is not None:  # a Monitor on a WebSocket: it reads from a host, as WebFetch does
            return external_tool(call, plan, rules, read_only, url)
        return shells.decide_monitor(call, plan)
    if call.tool in toolset.UNREAD_SHELLS:
        return shells.decide_unread(call, plan)
    if call.tool in toolset.READERS:
        return decide_read(call)
    if call.tool in toolset.OUTSIDE:
        return shells.decide_outside(call, plan) or tools_check(call, rules)
    if call.tool == "Skill":
        name = call.input.get("skill") if isinstance(call.input, dict) else None
        if not isinstance(name, str):
            return refuse("payload", "baton denied this Skill call: its input has no skill name, so it cannot be "
                                     "checked.")
        if name.strip().lstrip("/").lower().startswith("baton:approve"):
            return refuse("approve", "baton denied /baton:approve: only a person may approve a step, by typing it "
                                     "in the prompt.")
        return tools_check(call, rules)
    if call.tool == "WebFetch" or call.tool.startswith("mcp__"):
        return external_tool(call, plan, rules, read_only)
    if call.tool in SCHEDULERS:
        text = paths.fold(repr(call.input))
        if "approve" in text and "baton" in text:
            return refuse("approve", "baton denied scheduling an approval: only a person may approve a step, by "
                                     "typing it.")
        if scheduled_command(call.input):
            return refuse("scheduled", "baton denied scheduling a baton command: a prompt that fires later is not "
                                       "typed by a person, and baton's commands in the prompt (/baton:record, "
                                       "/record ...) speak for the person (a skip among them). Run `baton record` "
                                       "yourself when it is time, or leave the step to the person.")
        return tools_check(call, rules)
    return tools_check(call, rules)


def scheduled_command(value: Any) -> bool:
    """A prompt among ``value``'s strings (any field, any depth) that baton's prompt hook would answer
    as a person's command that changes the job (``/baton:record``, ``/baton:approve``, ``/baton:plan``,
    a bare ``/record``); ``/baton:brief`` and ``/baton:status`` only read."""
    if isinstance(value, dict):
        return any(scheduled_command(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(scheduled_command(v) for v in value)
    if not isinstance(value, str):
        return False
    for word in paths.fold(value).split():
        name = word.lstrip("/")
        name = name[len("baton:"):] if name.startswith("baton:") else name if word.startswith("/") else ""
        if name.startswith(PERSON_COMMANDS):
            return True
    return False


def external_tool(call: Call, plan: Optional[Plan], rules: Rules, read_only: Optional[Tuple[str, str]],
                  url: Optional[str] = None) -> Optional[str]:
    """WebFetch and a Monitor's WebSocket (``url``) read, MCP tools may do anything: all send data out,
    judged by ``allow_hosts``."""
    from store.gate.rules import allow_hosts
    from store.plan.hosts import host_policy

    hosts = host_policy(plan.rules) if plan else None
    reads = call.tool == "WebFetch" or url is not None
    if reads:
        target = url if url is not None else (call.input.get("url") if isinstance(call.input, dict) else None)
        key = decide_file_url(call, target) if isinstance(target, str) else None
        if key:
            return key
        sent = allow_hosts.web_fetch({"url": target}, hosts, call.tool)
    else:
        sent = allow_hosts.mcp(call.tool, hosts)
    if sent.refusal:
        return sent.refusal
    if read_only and not reads:
        return refuse(read_only[0], f"baton denied {call.tool}: {read_only[1]}")
    call.external = sent.count if plan and plan.limits.get("external_ops") else 0  # counted while limited
    return tools_check(call, rules)


def count_external(job: Job, call: Call) -> Optional[str]:
    """Count the operations ``call`` sends out (``limits.external_ops``); refuse once the job's
    limit would be passed. The count lives in counters.json (``store.monitor.outcomes``)."""
    from store.monitor import outcomes

    cap = job.plan.limits.get("external_ops")
    if outcomes.take_external(job.layout, call.external, cap) is not None:
        return None
    return refuse("external-ops", f"baton denied this call: it sends data out of the machine, and the job has used "
                                  f"its {cap:g} external operations (limits.external_ops). Finish without it, or stop "
                                  "and ask the person to raise the limit in .baton/plan.json.")


def waiting_reason(step: Step) -> Tuple[str, str]:
    return "waiting", (f"step {step.id} waits for a person's approval, and until then only reading is allowed. "
                       f"Stop and ask the person to type /baton:approve {step.id}; do not try to approve it "
                       "yourself.")


def no_claim_reason(job: Job) -> str:
    """Why a worker of a parallel plan that holds no step may only read, and what to do."""
    lost = [(step, entry) for step, entry in job.snap.claims.items()
            if (entry.get("after") or {}).get("worker") == job.worker and entry.get("worker") != job.worker]
    head = "this job runs steps in parallel and you hold none"
    if lost:
        step, entry = lost[0]
        head = (f"your claim on {step} lapsed (no activity for longer than its lease) and worker "
                f"{str(entry.get('worker'))[:12]} holds it now")
    return (f"{head}, so only reading is allowed. Run `baton claim` to take a ready step, then work on the NEXT it "
            "gives you; if nothing is ready, stop.")


def limit_reason(hit: Sequence[str]) -> Tuple[str, str]:
    return "limit", (f"the job reached its limit ({', '.join(hit)}), so only reading is allowed. Stop and report "
                     "to the person; they can raise the limit in .baton/plan.json.")


def _already_changed(call: Call, counters: Mapping[str, Any]) -> bool:
    """A Write or Edit of a file this step has already changed adds nothing to its count."""
    raw = call.input.get(WRITE_TOOLS.get(call.tool, ""))
    if not isinstance(raw, str) or not raw:
        return False
    from store.monitor import outcomes

    return outcomes.shown_path(os.path.join(call.cwd, raw), call.project) in counters.get("changed", ())


def read_only_reason(job: Job, call: Call) -> Optional[Tuple[str, str]]:
    """(code, why) when only reading is allowed now: NEXT waits for a person, a job limit is
    reached, the step has changed as many files as ``limits.changed_files`` allows, baton has not
    finished reading a long ledger, so NEXT is not known for sure (fail closed), the job's database
    cannot be reached, or this worker of a parallel plan holds no step."""
    if job.problem:
        return "database", (f"the job's database cannot be reached ({job.problem}), so which step you hold "
                            "cannot be checked and only reading is allowed until it is back (baton record still "
                            "works: it queues the record).")
    nxt = job.next
    if job.reading:
        return "reading", (f"baton has not finished reading this job's long ledger ({job.reading_note()}), so it "
                           "cannot tell which step is NEXT yet; only reading is allowed until it has. Try again in "
                           "a few seconds: each call reads on.")
    if job.unresolved:
        return "reading", ("baton has not finished reading this job's long ledger (a fresh clone, say), so it cannot "
                           "tell which step is NEXT yet; only reading is allowed until it has. Try again in a minute.")
    if nxt is None and job.plan.parallel and not job.complete():
        return "no-claim", no_claim_reason(job)
    if nxt is not None and job.waiting_for_approval():
        return waiting_reason(nxt)
    from store.monitor import limits, outcomes  # a job's calls only: a project without one needs neither

    counters = outcomes.read_counters(job.layout)
    hit = limits.reached(job.plan.limits, job.snap, counters)
    if job.plan.parallel:
        counters = outcomes.for_worker(counters, job.worker)
    if hit:
        return limit_reason(hit)
    over = nxt is not None and limits.step_files_over(job.plan.limits, counters, nxt.id)
    if nxt is not None and over and not _already_changed(call, counters):
        cap = int(job.plan.limits["changed_files"])
        return "changed-files", (f"step {nxt.id} has already changed {cap} files, the job's changed_files limit. "
                                 f"Record the step (baton record {nxt.id} done \"<note>\") before changing more.")
    return None
