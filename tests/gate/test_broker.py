"""baton's own commands chained with sandboxed work, run for real: through the PreToolUse hook, then as
Claude Code's Bash tool runs the answer (bubblewrap present), then PostToolUse.

Every chained form records as it would without the sandbox; the work stays sandboxed; a call the
gate would not run alone without a person (a step that is not NEXT, ``approve``) is refused with
one line; ``baton`` in a script the gate cannot read says it cannot reach the job; nothing the work
does reaches the ledger; calls at once lose nothing; a caller killed mid-call ends its call; the
broker never outlives its sandbox."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple

import gatemodes
import pytest
from corpus import STEPS
from execution import ask_baton, hook_env, make_template, run_bash, set_mode, tell_baton

from store.sandbox import rewrite

OPEN = STEPS["open"]  # a (NEXT), b (waits for approval), c


class Ran(NamedTuple):
    decision: str
    code: int
    out: str
    err: str
    notes: str


class Job:
    """One form's folder (a project with a job whose NEXT is ``a``, a home), and the Bash tool's way of running."""

    def __init__(self, base: Path, plan: Dict[str, Any]) -> None:
        self.base, self.project = base, base / "project"
        (self.project / ".baton/plan.json").write_text(json.dumps(plan))
        set_mode(base, "sandboxed")
        hook_env(base)
        self.calls = 0

    def run(self, command: str) -> Ran:
        """``command`` as Claude Code runs it after baton's answer (an ``ask`` counts as the person's yes)."""
        self.calls += 1
        tool_use_id = f"toolu_broker_{self.calls}"
        answer = ask_baton(self.base, command, tool_use_id) or {}
        decision = str(answer.get("permissionDecision") or "")
        if decision == "deny":
            return Ran(decision, -1, "", str(answer.get("permissionDecisionReason")), "")
        ran = str((answer.get("updatedInput") or {}).get("command") or command)
        code, out, err = run_bash(self.base, ran, f"broker-{os.getpid()}-{self.calls}")
        return Ran(decision, code, out, err, tell_baton(self.base, ran, tool_use_id, code, out + err))

    def run_unwatched(self, command: str) -> float:
        """``command`` as Claude Code runs it, nothing killed after it (``run`` kills what is left after
        5 seconds): the seconds until its output is closed (by everything that could write to it:
        the shell, bwrap, which waits for all that runs in its sandbox, the broker the shell waits
        for, and the calls it ran outside), and no broker of this job is left."""
        import subprocess

        from execution import cc_env

        self.calls += 1
        answer = ask_baton(self.base, command, f"toolu_broker_{self.calls}") or {}
        line = str((answer.get("updatedInput") or {}).get("command") or "")
        assert line, answer
        outer = f"source /dev/null; eval {rewrite.quote(line)}"
        started = time.monotonic()
        try:
            subprocess.run(["/bin/bash", "-c", outer], cwd=self.project, env=cc_env(self.base), capture_output=True,
                           timeout=50, start_new_session=True)
        except subprocess.TimeoutExpired:
            return 50.0
        assert not _brokers(self.base)
        return time.monotonic() - started

    def ledger(self) -> List[Dict[str, Any]]:
        lines = (self.project / ".baton/steps.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def recorded(self) -> List[tuple]:  # type: ignore[type-arg]
        return [(r["step"], r["status"], r.get("note", "")) for r in self.ledger()[1:]]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gatemodes.sandboxed_here(tmp_path_factory.mktemp("probe-home"))
    base = make_template(tmp_path_factory.mktemp("broker-template"))
    (base / "project/tools/hidden.sh").write_text("baton record a done from-a-script\n")
    (base / "project/tools/hidden_c.sh").write_text("baton record c done not-next\n")
    (base / "project/tools/hidden_approve.sh").write_text("baton approve b\n")
    return base


@pytest.fixture
def job(template: Path, tmp_path: Path) -> Iterator[Job]:
    import shutil

    saved = dict(os.environ)
    shutil.copytree(template, tmp_path / "f", symlinks=True)
    try:
        yield Job(tmp_path / "f", OPEN)
    finally:
        os.environ.clear()
        os.environ.update(saved)


CHAINED = [  # (command, what the ledger gains, a file the work wrote)
    ('echo A > a.txt && baton record a done "wrote a.txt"', [("a", "done", "wrote a.txt")], "a.txt"),
    ("echo A > a.txt; baton record a done semicolon", [("a", "done", "semicolon")], "a.txt"),
    ("cd src && echo x > y.txt && baton record a done 'in src'", [("a", "done", "in src")], "src/y.txt"),
    ("test -f README.md && baton record a done ok || baton record a failed no", [("a", "done", "ok")], ""),
    ("test -f missing && baton record a done ok || baton record a failed no", [("a", "failed", "no")], ""),
    ("for s in a; do baton record $s done loop; done", [("a", "done", "loop")], ""),
    ("(echo sub > sub.txt; baton record a done subshell)", [("a", "done", "subshell")], "sub.txt"),
    ("baton record a done first && baton record c done second", [("a", "done", "first"), ("c", "done", "second")],
     ""),
    ("printf 'baton record a done from-a-script\\n' > run.sh && sh run.sh", [("a", "done", "from-a-script")],
     "run.sh"),
]


@pytest.mark.parametrize("command,gained,wrote", CHAINED, ids=[c[0][:40] for c in CHAINED])
def test_a_chained_baton_call_records_as_without_the_sandbox(job: Job, command: str, gained: List[tuple],
                                                             wrote: str) -> None:
    ran = job.run(command)
    assert ran.decision in ("allow", "ask") and ran.code == 0, ran
    assert job.recorded() == gained, (job.recorded(), ran)
    assert not wrote or (job.project / wrote).exists()
    assert "NEXT:" in ran.notes, "PostToolUse tells the model its new NEXT after a chained record"


def test_the_brief_chained_before_work_and_cd_persisting(job: Job) -> None:
    ran = job.run("baton brief && cd src && pwd")
    assert ran.code == 0 and "NEXT: a" in ran.out and ran.out.rstrip().endswith("/project/src"), ran
    assert (job.base / "claude-cwd").read_text().strip().endswith("/project/src"), "cd persists as without it"


def test_the_work_stays_sandboxed_and_a_forged_line_never_reaches_the_ledger(job: Job) -> None:
    before = job.ledger()
    ran = job.run("echo pwn | tee -a .bat?n/steps.jsonl; baton record a done real; echo pwn | tee -a ~/.bash?c")
    assert job.recorded() == [("a", "done", "real")] and "pwn" not in (job.project / ".baton/steps.jsonl").read_text()
    assert job.ledger()[:len(before)] == before
    assert "Read-only file system" in ran.err and "pwn" not in (job.base / "home/.bashrc").read_text()


@pytest.mark.parametrize("script,words", [("hidden_c.sh", "baton record c done not-next"),
                                          ("hidden_approve.sh", "baton approve b")])
def test_a_call_that_needs_a_person_is_refused_with_one_line(job: Job, script: str, words: str) -> None:
    ran = job.run(f"baton brief >/dev/null && sh tools/{script}")
    refusal = [line for line in ran.err.splitlines() if line.startswith("baton")]
    assert ran.code != 0 and len(refusal) == 1, ran
    assert "person" in refusal[0] and (f"run `{words}` as a command of its own" in refusal[0] or "approve" in words)
    assert job.recorded() == []


def test_baton_in_a_script_the_gate_cannot_read_says_so_and_fails(job: Job) -> None:
    ran = job.run("sh tools/hidden.sh")
    assert ran.code != 0 and job.recorded() == [], ran
    assert "cannot reach the job" in ran.err and "run `baton record a done from-a-script` as a command of its own" \
        in ran.err, ran.err


def test_calls_at_once_lose_nothing(job: Job) -> None:
    ran = job.run("baton record a running one & baton record a running two & baton status >/dev/null & wait; "
                  "baton log -n 5")
    assert ran.code == 0, ran
    assert sorted(job.recorded()) == [("a", "running", "one"), ("a", "running", "two")]
    assert os.system(f"cd {job.project} && python3 {Path(__file__).parents[2] / 'bin/baton'} verify >/dev/null") == 0


def test_once_from_a_chain_runs_its_command_in_the_sandbox_with_stdin(job: Job) -> None:
    ran = job.run("echo hi > src/x.txt && echo from-stdin | baton once notify -- sh -c "
                  "'cat > src/sent.txt; echo pwn | tee -a ~/.prof?le'")
    assert ran.code == 1 and "Read-only file system" in ran.err, ran  # its own exit: the home folder is read-only
    assert (job.project / "src/sent.txt").read_text() == "from-stdin\n"
    assert (job.base / "home/.profile").read_text() == "# profile\n"
    statuses = [(r["status"], r.get("key")) for r in job.ledger()[1:]]
    assert statuses == [("intent", "notify"), ("result", "notify")], statuses


def test_a_caller_killed_mid_call_ends_it_and_the_broker_ends_with_the_sandbox(job: Job) -> None:
    started = time.monotonic()
    ran = job.run("baton once slow -- sleep 60 & sleep 2; kill -9 $!; wait; baton record a running after")
    assert time.monotonic() - started < 30, "the killed call's command did not keep running"
    assert ("a", "running", "after") in job.recorded(), ran
    statuses = [(r["status"], r.get("key")) for r in job.ledger()[1:] if r.get("key")]
    assert statuses == [("intent", "slow")], "its command was ended: an intent with no result, an unknown outcome"
    assert not _brokers(job.base), "the broker outlived its sandbox"


@pytest.mark.parametrize("command", ["baton once later -- sleep 2 &", "baton brief; sleep 0.5",
                                     "baton once slow -- sleep 60 & sleep 1; kill -9 $!"])
def test_the_broker_and_its_calls_end_with_the_sandbox(job: Job, command: str) -> None:
    assert job.run_unwatched(command) < 30, "the broker or a call it ran outlived the sandbox"


def _brokers(base: Path) -> List[str]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                line = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "store/gate/broker.py" in line and str(base) in line:
                found.append(line)
    return found


def test_record_done_with_a_validate_command_checks_it(job: Job) -> None:
    plan = {"steps": [{"id": "a", "validate": "test -f a.txt"}, "b"]}
    (job.project / ".baton/plan.json").write_text(json.dumps(plan))
    refused = job.run("echo no > other.txt && baton record a done early")
    assert refused.code != 0 and [r[:2] for r in job.recorded()] == [("a", "failed")], refused  # as without it
    ran = job.run("echo A > a.txt && baton record a done validated")
    assert ran.code == 0 and job.recorded()[-1] == ("a", "done", "validated"), ran
    assert job.ledger()[-1]["validation"]["status"] == "passed"
