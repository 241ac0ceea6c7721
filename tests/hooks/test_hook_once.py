"""PreToolUse on Bash with ``baton once``: a command matching the plan's ``effects`` is denied
unless it runs through ``baton once`` (the reason shows the wrapped form), and the command that
``baton once`` runs is held to the step's policy like any other: by reading it where no sandbox
runs, by the sandbox it is started in where one does. The second half does what Claude Code would
do with each answer (nothing on deny, the rewritten command on ``updatedInput``, the original
otherwise) and compares the files."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Dict, List, NamedTuple

import gatemodes
import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

EFFECTS = ["gh pr create*", "curl -X POST*", "./notify.sh*"]
PLANS: Dict[str, Dict[str, object]] = {
    "open": {"effects": EFFECTS, "steps": ["deliver", "later"]},
    "restricted": {"effects": EFFECTS, "steps": [{"id": "deliver", "writes": ["src/**"], "bash": ["./notify.sh*"]},
                                                 "later"]},
    "waiting": {"effects": EFFECTS, "steps": [{"id": "deliver", "approval": True}, "later"]},
}
A = "allow"
UE = "unknown-effect"  # refused by reading it where no sandbox runs; with the sandbox it runs there, confined


class Case(NamedTuple):
    command: str
    open: str
    restricted: str
    waiting: str


CASES: List[Case] = [
    Case("gh pr create --title 'Fix it'", "once", "once", "once"),
    Case("baton once pr-1 -- gh pr create --title 'Fix it'", A, UE, "waiting"),
    Case("timeout 30 gh pr create", "once", "once", "once"),
    Case("sudo gh pr create --fill", "once", "once", "once"),
    Case("echo start && gh pr create --fill", "once", "once", "once"),
    Case("curl -X POST https://example.invalid/mail", "once", "once", "once"),
    Case("curl https://example.invalid/status", A, A, A),
    Case("./notify.sh team", "once", "once", "once"),
    Case("cd src; ./notify.sh team", "once", "once", "once"),
    Case("baton once notify-team -- ./notify.sh team", A, A, "waiting"),
    Case("baton once notify-team --id-from 'id=(\\d+)' -- ./notify.sh team", A, A, "waiting"),
    Case("baton once notify -- ./notify.sh team; ./notify.sh again", "once", "once", "once"),
    Case("baton once approve-release -- ./notify.sh team", A, A, "waiting"),
    Case("echo 'gh pr create is next'", A, A, A),
    Case("baton once --settle pr-1 done 'PR #7 exists'", A, A, A),
    Case("baton once k -- baton approve deliver", "approve", "approve", "approve"),
    Case("baton once k -- cp a.txt src/b.txt", A, A, "waiting"),
    Case("baton once k -- cp a.txt docs/b.txt", A, "writes", "waiting"),
    Case("baton once k -- rm -rf docs", A, "writes", "waiting"),
    Case("baton once k -- sh -c 'echo x > .baton/plan.json'", "own-files", "own-files", "own-files"),
    Case("baton once k -- python3 -c 'open(\"docs/x\", \"w\")'", A, UE, "waiting"),
    # effects are matched on the parsed command: quotes, escapes, shells and wrappers are seen through
    Case("sh -c 'gh pr create --fill'", "once", "once", "once"),
    Case("g''h pr cr\\eate --fill", "once", "once", "once"),
    Case("/usr/bin/env gh pr create --fill", "once", "once", "once"),
    Case("cmd=create; gh pr $cmd --fill", "once", "once", "once"),
    Case("baton once pr-2 -- gh pr create --fill && gh pr create --fill", "once", "once", "once"),
]


def bash(payload: Payloads, command: str) -> Dict[str, object]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"})


def code_of(reason: str) -> str:
    return reason.rsplit("[baton:", 1)[-1].rstrip("]") if "[baton:" in reason else ""


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("case", CASES, ids=[c.command for c in CASES])
def test_once_table(case: Case, plan: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS[plan])
    want = getattr(case, plan)
    want = A if want == UE and hook.sandboxed else want  # type: ignore[attr-defined]
    result = hook("PreToolUse", bash(payload, case.command))
    if want == A:
        assert not result.denied, f"{case.command!r} was refused: {result.reason}"
    else:
        assert result.denied and code_of(result.reason) == want, f"{case.command!r}: {result.reason}"


def test_the_reason_shows_the_wrapped_form(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS["open"])
    reason = inproc("PreToolUse", bash(payload, "gh pr create --title 'Fix it'")).reason
    assert "is a side effect this job runs only through `baton once`" in reason
    assert "(the plan's effects pattern `gh pr create*`)" in reason
    assert "Run it as: baton once deliver-gh-pr-create -- gh pr create --title 'Fix it'" in reason
    assert reason.endswith("[baton:once]")


def test_a_plan_without_effects_leaves_those_commands_alone(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["deliver"])
    assert not hook("PreToolUse", bash(payload, "gh pr create --fill")).denied


def tree(root: Path) -> Dict[str, str]:
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".baton"]
        for name in names:
            path = Path(folder) / name
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


DONE = [
    "gh pr create --title x", "./notify.sh team", "baton once n1 -- ./notify.sh team", "baton once g1 -- gh pr create",
    "baton once k1 -- cp a.txt src/b.txt", "baton once k2 -- cp a.txt docs/b.txt", "baton once k3 -- rm -rf docs",
    "baton once k4 -- sh -c 'echo x > .baton/plan.json'", "baton once k5 -- touch src/ok.txt docs/no.txt",
    "baton once n1 -- ./notify.sh team",
]


@pytest.mark.parametrize("mode", gatemodes.MODES)
def test_what_runs_after_the_answer_stays_inside_the_step(mode: str, subproc: Hook, job: JobDir, payload: Payloads,
                                                          plugin_root: Path) -> None:
    gatemodes.set_mode(mode, job.home)
    job.plan(PLANS["restricted"])
    project = job.project
    (project / "src").mkdir()
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("guide\n")
    (project / "a.txt").write_text("a\n")
    notify = project / "notify.sh"
    notify.write_text("#!/bin/sh\necho \"$1\" >> src/notified.txt\n")
    notify.chmod(0o755)
    stubs = project.parent / "stubs"
    stubs.mkdir(exist_ok=True)
    (stubs / "gh").write_text(f"#!/bin/sh\necho pr >> {project}/docs/pr-made.txt\n")
    (stubs / "gh").chmod(0o755)
    env = {**os.environ, "PATH": f"{plugin_root / 'bin'}:{stubs}:{os.environ['PATH']}"}
    plan_before = job.layout.plan.read_bytes()
    for command in DONE:
        before = tree(project)
        answer = subproc("PreToolUse", bash(payload, command))
        ran = hookkit.runs_after(answer, command)
        if ran is not None:
            subprocess.run(["bash", "-c", ran], cwd=project, env=env, capture_output=True, timeout=60)
            subproc("PostToolUse", payload("post_tool_use_bash", tool_input={"command": ran, "description": "run"}))
        after = tree(project)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        assert all(p.startswith("src/") for p in changed), (command, answer.reason, changed)
    assert (project / "src" / "notified.txt").read_text() == "team\n"  # once, though asked twice
    assert (project / "src" / "b.txt").exists() and not (project / "docs" / "pr-made.txt").exists()
    assert (project / "docs" / "guide.md").exists() and job.layout.plan.read_bytes() == plan_before
    statuses = [(r["key"], r["status"]) for r in job.ledger() if "key" in r]
    sandboxed = [("g1", "intent"), ("g1", "result")] if mode == "sandboxed" else []  # gh ran, in the sandbox
    assert statuses == [("n1", "intent"), ("n1", "result"), *sandboxed, ("k1", "intent"), ("k1", "result")]
    if mode == "sandboxed":
        assert next(r for r in job.ledger() if r.get("key") == "g1" and r["status"] == "result")["exit"] != 0
