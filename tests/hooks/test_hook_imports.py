"""What each hook process imports, started as hooks.json starts it: within an explicit allowlist.

A hook's cost is almost all imports (bench/bench_hooks.py measures it beside a minimal Python
hook). So a change that drags pathlib (and with it urllib.parse, ipaddress, ntpath, fnmatch,
warnings), hashlib, importlib, math, typing or a part of store/ a call does not need back onto
a hook's path fails here, whatever the timer says on a busy machine. Each case runs once in a
project without a job (almost nothing may load) and once in a job whose NEXT needed, and has, a
person's approval (the job's whole read path loads). The standard library's share is what the
interpreter loads to start, plus the few modules listed: not json, nor re and the enum,
functools and collections it brings (together as much again as the interpreter's start), except
where a Bash command is read or a plan's rule is a pattern.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, FrozenSet, Set

import pytest
from conftest import Hook, JobDir, Payloads

from store.cli import actions

# beyond the interpreter's start: os and its helpers (frozen in 3.11+), errno (a built-in), the
# __future__ module every `from __future__ import annotations` loads, the built-in SHA-256, the C JSON codec,
# the built-in gc (a hook collects less often)
STDLIB = frozenset({"os", "posixpath", "genericpath", "stat", "_stat", "_collections_abc", "errno", "__future__",
                    "_sha256", "_sha2", "_json", "gc"})
LOCKS = frozenset({"fcntl"})  # the recorders take the hooks lock
NEVER = ("pathlib", "urllib", "urllib.parse", "ipaddress", "ntpath", "fnmatch", "warnings", "math", "importlib",
         "hashlib", "_hashlib", "typing", "dataclasses", "shlex", "subprocess", "glob", "json", "json.decoder", "re",
         "enum")

CORE = frozenset({"hooks", "hooks.adapter", "hooks.codecache", "hooks.context", "store", "store.base",
                  "store.base.jsonc", "store.base.values", "store.state", "store.state.location"})
# a job's plan, snapshot, NEXT and approvals, as every hook with a job reads them
JOB = frozenset({"store.base.errors", "store.state.job", "store.state.journal", "store.state.snapshot",
                 "store.ledger.ledger", "store.plan.plan", "store.plan.rules", "store.state.brief", "store.base.text",
                 "store.ledger.sealing", "store.state.approvals", "store.plan.scope",
                 # which store the environment selects; NEXT is a worker's own step; the plan's sandbox settings
                 "store.backend", "store.backend.choice", "store.state.claims", "store.state.leases",
                 "store.state.workers", "store.plan.sandbox_settings", "store.plan", "store.ledger",
                 "store.base.bounded"})  # the plan is read as a regular file, bounded (issue 25)
GATE = frozenset({"hooks.pre_tool_use", "store.gate", "store.gate.policy", "store.gate.call", "store.gate.files",
                  "store.gate.rules", "store.sandbox", "store.sandbox.code_paths", "store.base.paths",
                  # the table of tools, and the decisions for the reading tools and the other shells
                  "store.gate.toolset", "store.gate.reads", "store.gate.shells",
                  "store.sandbox.own_paths"})  # the plugin's folder and the probe, which no tool writes
COUNTERS = frozenset({"store.monitor", "store.monitor.limits", "store.monitor.outcomes", "store.monitor.counters",
                      "store.monitor.api_errors"})  # the brief's LIMIT and API ERROR lines come from the counters
# the brief's CHANGED and STALE lines, after a look at the snapshot (store.state.checkpointed: which steps have one)
BRIEF = frozenset({"store.state.health", "store.state.protocol", "store.checkpoint", "store.state.checkpointed"})
# reading a Bash command: baton's shell reader, which scans without re (store.base.chars), and the
# plan's deny_bash patterns (fnmatch's, matched by store.base.wild)
SHELL = frozenset({"store.shell", "store.shell.builtin", "store.shell.command", "store.shell.known",
                   "store.shell.environment", "store.shell.grammar", "store.shell.lex", "store.shell.spans",
                   "store.shell.programs", "store.shell.findings", "store.shell.scan", "store.shell.variables",
                   "store.shell.words", "store.shell.writers", "store.base.chars", "store.base.wild", "store.gate.bash",
                   "store.gate.rules", "store.gate.rules.deny_bash", "store.plan", "store.plan.hosts",
                   "store.plan.hostnames",
                   "store.gate.runners", "store.shell.simple"})
# a Bash call that passes while a job is active is rewritten to run in bubblewrap (the person's
# permission rules are fnmatch patterns too; its job folder is named by zlib's checksums of its path),
# behind the launcher that mounts the job's /tmp
SANDBOX = frozenset({"store.gate.baton_calls", "store.sandbox.claude_settings", "store.gate.enforce",
                     "store.sandbox.mounts", "store.sandbox.mode", "store.gate.permissions", "store.sandbox.probe",
                     "store.sandbox.rewrite", "store.sandbox.runs", "store.sandbox.bwrap_args",
                     "store.sandbox.writable", "store.sandbox.scratch", "zlib",
                     # unix sockets outside hidden, abstract ones scoped; hard links out of the writes
                     "store.sandbox.sockets", "store.sandbox.landlock_scope", "store.sandbox.hardlinks"})
# the brief says whether the sandbox can run here (store.sandbox.mode, without the Bash gate), and the
# start is noted for the job's figures
BRIEF_GATES = frozenset({"store.sandbox", "store.sandbox.mode", "store.sandbox.claude_settings", "store.sandbox.probe",
                         "store.sandbox.own_paths",
                         "store.cli", "store.cli.views", "store.monitor.alerts", "store.monitor.watch"})
ALERTS = frozenset({"store.monitor.alerts", "store.monitor.clock"})  # raised once per condition, for the person
# the Stop hook folds the session's transcripts into the job's figures (by path strings: no pathlib)
# and may record the stop; the telemetry sender (which loads pathlib) only when telemetry is on
FIGURES = ALERTS | {"store.monitor.compact", "store.monitor.costs", "store.monitor.figures", "store.monitor.fold",
                    "store.monitor.stored", "store.monitor.tally", "store.monitor.transcript", "store.monitor.watch",
                    "store.state.attempts", "store.state.once_keys", "store.state.keylock"}
EGRESS = frozenset({"store.gate.rules", "store.gate.rules.allow_hosts", "store.gate.urls", "store.plan",
                    "store.plan.hosts", "store.plan.hostnames", "store.base.regex"})

# case -> (event, fixture, changes, allowed without a job, allowed with one)
PROMPT = frozenset({"hooks.user_prompt_submit"})
CASES: Dict[str, Any] = {
    "SessionStart": ("SessionStart", "session_start_startup", {}, {"hooks.session_start"},
                     {"hooks.session_start", "store.state.seen", "store.base.durable"} | JOB | COUNTERS | BRIEF
                     | LOCKS | BRIEF_GATES),
    "UserPromptSubmit": ("UserPromptSubmit", "user_prompt_submit", {}, PROMPT,
                         PROMPT | {"store.state.seen", "store.base.durable"} | JOB | COUNTERS | BRIEF | LOCKS),
    "UserPromptSubmit /baton:brief": ("UserPromptSubmit", "user_prompt_submit", {"prompt": "/baton:brief"},
                                      PROMPT | {"store.cli", "store.cli.prompt", "store.base.errors"},
                                      PROMPT | {"store.cli", "store.cli.prompt"} | JOB | COUNTERS | BRIEF
                                      | BRIEF_GATES
                                      # the events file's writer, under the hooks lock: the session answered a
                                      # command, so the report draws no empty session for it
                                      | {"store.base.durable"} | LOCKS),
    "PreToolUse Write": ("PreToolUse", "pre_tool_use_write", {}, GATE | {"store.state.approvals"},
                         GATE | JOB | COUNTERS | {"store.sandbox.runs",  # waits while a sandboxed command runs
                                                  "store.sandbox.claude_settings"}),  # the person's settings files
    "PreToolUse Bash": ("PreToolUse", "pre_tool_use_bash", {},
                        GATE | SHELL | {"store.plan.rules", "store.base.errors", "store.state.approvals"},
                        GATE | JOB | COUNTERS | SHELL | SANDBOX),
    "PreToolUse WebFetch": ("PreToolUse", "pre_tool_use_write", {"tool_name": "WebFetch", "tool_input": {
                            "url": "https://example.com/a", "prompt": "the title"}},
                            GATE | EGRESS | {"store.state.approvals"},
                            GATE | JOB | COUNTERS | EGRESS),
    "PreToolUse MCP tool": ("PreToolUse", "pre_tool_use_write", {"tool_name": "mcp__github__get_issue",
                            "tool_input": {"number": 7}},
                            GATE | EGRESS | {"store.state.approvals"},
                            GATE | JOB | COUNTERS | EGRESS),
    "PostToolUse Write": ("PostToolUse", "post_tool_use_write", {}, {"hooks.post_tool_use"},
                          {"hooks.post_tool_use", "store.base.durable", "store.base.paths"} | JOB | COUNTERS | LOCKS
                          | ALERTS),
    "PostToolUseFailure Bash": ("PostToolUseFailure", "post_tool_use_failure_bash", {}, {"hooks.post_tool_use"},
                                {"hooks.post_tool_use", "store.base.durable"} | JOB | COUNTERS | LOCKS | ALERTS
                                # the original command, read back from a sandbox's rewrite
                                | {"store.gate", "store.gate.baton_calls", "store.sandbox", "store.sandbox.rewrite"}),
    # a turn an API error ended: NEXT, and the events file and counters it is counted in
    "StopFailure": ("StopFailure", "stop_failure", {}, {"hooks.stop_failure"},
                    {"hooks.stop_failure", "store.base.durable"} | JOB | COUNTERS | LOCKS),
    # NEXT without the brief's other lines; the events file's writer only to log an alert
    "Stop": ("Stop", "stop", {}, {"hooks.stop"},
             {"hooks.stop", "store.monitor.loop", "store.state.protocol", "store.base.durable"}
             | JOB - {"store.state.brief"} | COUNTERS - {"store.monitor.outcomes"} | LOCKS | FIGURES),
}
PLAN = {"job": "imports", "limits": {"tool_calls": 1000, "changed_files": 40},
        "protect": ["LICENSE", ".github/**"], "rules": [{"id": "no-push", "deny_bash": "git push*"}],
        "steps": [{"id": "survey", "phase": "discovered"},
                  {"id": "build", "phase": "implemented", "approval": True, "writes": ["src/**", "a.txt"],
                   "bash": ["pytest*"]}, "ship"]}


@pytest.fixture(scope="module")
def start_modules() -> FrozenSet[str]:
    """What the interpreter loads to run nothing, started as hooks are (-S)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-S", "-c", "pass"], capture_output=True, check=True)
    return frozenset(imported(proc.stderr.decode("utf-8", "replace")))


def imported(stderr: str) -> Set[str]:
    """The modules ``-X importtime`` (PYTHONPROFILEIMPORTTIME) reported on stderr."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and not line.rstrip().endswith("| imported package")}


def make_job(job: JobDir) -> None:
    job.plan(PLAN)
    job.record("survey", "done", "what there is")
    actions.approve_step(job.layout, {"HOME": str(job.home)}, "build", "go", "/baton:approve typed in the prompt")
    job.record("build", "running", "started")


@pytest.mark.parametrize("with_job", [False, True], ids=["no job", "job"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_hook_imports_only_what_its_event_needs(case: str, with_job: bool, subproc: Hook, job: JobDir,
                                                  payload: Payloads, start_modules: FrozenSet[str]) -> None:
    event, fixture, changes, bare, full = CASES[case]
    if with_job:
        make_job(job)
        # the first call with a job probes bubblewrap (subprocess) and caches the answer: time a later one
        subproc(event, payload(fixture, **changes), stderr_ok=True)
    result = subproc(event, payload(fixture, **changes), stderr_ok=True,
                     env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    loaded = imported(result.err)
    assert "hooks.adapter" in loaded and not [line for line in result.err.splitlines()
                                             if not line.startswith("import time:")], result.err[-2000:]
    if with_job and event == "PreToolUse":
        assert not result.denied, result.reason  # the approved step's own write, read and calls pass
    allowed = start_modules | STDLIB | CORE | (full if with_job else bare)
    assert not loaded & (set(NEVER) - allowed), sorted(loaded & set(NEVER))
    assert sorted(loaded - allowed) == [], str(sorted(loaded - allowed))


def test_the_allowlists_name_real_modules() -> None:
    """A renamed module must be renamed here too, or the lists would allow what no longer exists."""
    root = Path(__file__).resolve().parents[2]
    names = set().union(*(c[3] | c[4] for c in CASES.values()))
    for name in (n for n in names if n.split(".")[0] in ("store", "hooks")):
        parts = name.split(".")
        assert (root.joinpath(*parts).with_suffix(".py").is_file()
                or (root.joinpath(*parts) / "__init__.py").is_file()), name
    assert json.dumps(PLAN)  # the plan above is what make_job writes
