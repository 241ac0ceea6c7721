"""The sandboxed gate through the hooks: the answers (deny, ask or allow, always with the rewritten
command, never updatedInput alone), the person's own rules and modes, baton's own commands, the plan's
sandbox settings, PostToolUse finding the original command, and the Write/Edit checks that go with
the sandbox (hard links, files that run code later, a sandbox still running in the background)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, Iterator

import gatemodes
import hookkit
import pytest
from conftest import Hook, JobDir, Payloads

from store.sandbox import probe, runs, scratch

PLAN = {"steps": [{"id": "build", "writes": ["src/**"]}, {"id": "ship", "approval": True}]}


def bash(payload: Payloads, command: str, **extra: Any) -> Dict[str, Any]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run", **extra})


def write(payload: Payloads, path: str) -> Dict[str, Any]:
    return payload("pre_tool_use_write", tool_input={"file_path": path, "content": "x\n"})


def person(job: JobDir, **rules: Any) -> None:
    (job.home / ".claude").mkdir(exist_ok=True)
    (job.home / ".claude" / "settings.json").write_text(json.dumps({"permissions": rules}))


def specific(result: hookkit.Result) -> Dict[str, Any]:
    return dict((result.answer or {}).get("hookSpecificOutput") or {})


def test_a_command_comes_back_sandboxed_with_its_other_fields(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    result = hook("PreToolUse", bash(payload, "ls src", timeout=5000, run_in_background=True))
    if not hook.sandboxed:
        assert result.out == "", "the fallback leaves ordinary commands to Claude Code's own prompts"
        return
    answer = specific(result)
    assert answer["permissionDecision"] == "allow" and "read-only command" in answer["permissionDecisionReason"]
    new = answer["updatedInput"]
    assert (new["timeout"], new["run_in_background"], new["description"]) == (5000, True, "run")
    assert hookkit.sandbox_original(new["command"]) == "ls src"
    rid = "toolu_5"
    record = json.loads((job.state / "run" / f"{rid}.json").read_text())
    assert record["command"] == "ls src" and record["background"] is True
    assert (job.state / "run" / f"{rid}.args").exists() and (job.state / "run" / f"{rid}.lock").exists()
    assert not (job.state / "run" / f"{rid}.broker").exists(), "no broker for a command that calls no baton"


@pytest.mark.parametrize("command, decision", [
    ("make build", "ask"),
    ("echo x > src/a.txt", "allow"),  # acceptEdits: a redirection inside the project
    ("git status", "allow"),
])
def test_the_decision_follows_the_persons_rules_on_the_original(command: str, decision: str, inproc: Hook,
                                                                job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)  # (without the sandbox, Claude Code decides on the original itself)
    assert inproc("PreToolUse", bash(payload, command)).decision == decision


def test_the_persons_deny_rules_hold_in_both_modes(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["open"]})
    person(job, deny=["Bash(rm:*)"], allow=["Bash(make:*)"])
    result = hook("PreToolUse", bash(payload, "make clean && /bin/r''m -rf src"))
    assert result.denied and "your Claude Code deny rule Bash(rm:*) (user settings)" in result.reason
    assert result.reason.endswith("[baton:claude-rule]")
    if hook.sandboxed:
        assert hook("PreToolUse", bash(payload, "make all")).decision == "allow"


def test_baton_runs_its_own_commands_outside_by_absolute_paths(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    for command, decision in (("baton brief", "allow"), ("baton status --json", "allow"),
                              ('baton record build done "x; y"', "allow"), ("baton record ship done x", "ask")):
        result = hook("PreToolUse", bash(payload, command))
        assert result.decision == decision, (command, result)
        assert " '-I' '-S' '" in result.command and result.command.split("'")[-4:][0] != "", result.command
        assert "/bin/baton' " in result.command and "bwrap" not in result.command
    ran = subprocess.run(["/bin/bash", "-c", hook("PreToolUse", bash(payload, "baton brief")).command],
                         cwd=job.project, capture_output=True, text=True, env={**os.environ, "HOME": str(job.home)})
    assert ran.returncode == 0 and ran.stdout.startswith("PLAN: build, ship"), ran.stderr


def test_a_job_may_require_the_sandbox(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({**PLAN, "sandbox": {"require": True}})
    result = hook("PreToolUse", bash(payload, "ls"))
    if hook.sandboxed:
        assert result.decision == "allow"
    else:
        assert result.denied and "requires baton's sandbox, which cannot run here" in result.reason
        assert result.reason.endswith("[baton:sandbox]")
    assert not hook("PreToolUse", bash(payload, "baton brief")).denied, "baton's own commands run outside"


def test_auto_allow_lets_every_sandboxed_command_run_without_a_prompt(inproc: Hook, job: JobDir,
                                                                      payload: Payloads) -> None:
    job.plan({**PLAN, "sandbox": {"auto_allow": True}})
    person(job, ask=["Bash(docker:*)"])
    assert inproc("PreToolUse", bash(payload, "make build")).decision == "allow"
    assert inproc("PreToolUse", bash(payload, "docker ps")).decision == "ask", "the person's ask rules still ask"


@pytest.mark.parametrize("setup", ["plan turns it off", "Claude Code's own sandbox"])
def test_no_rewrite_where_baton_must_not_sandbox(setup: str, inproc: Hook, job: JobDir, payload: Payloads) -> None:
    if setup == "plan turns it off":
        job.plan({"steps": ["open"], "sandbox": {"enabled": False}})
    else:
        job.plan({"steps": ["open"]})
        (job.home / ".claude").mkdir(exist_ok=True)
        (job.home / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    assert inproc("PreToolUse", bash(payload, "make build")).out == ""


def test_post_tool_use_records_the_original_command_and_clears_the_run(inproc: Hook, job: JobDir,
                                                                      payload: Payloads) -> None:
    job.plan(PLAN)
    (job.project / "src").mkdir()
    result = inproc("PreToolUse", bash(payload, "echo hi > src/a.txt"))
    post = payload("post_tool_use_bash", tool_input={"command": result.command, "description": "run"},
                   tool_use_id="toolu_5")
    inproc("PostToolUse", post)
    event = job.events()[-1]
    assert event["target"] == "echo hi > src/a.txt" and event["changed"] == ["src/a.txt"]
    assert not list((job.state / "run").glob("toolu_5.*"))


@pytest.mark.parametrize("error", ["bwrap: Can't mount proc on /newroot/proc",
                                   f"{scratch.FAILED} (overlay on /tmp: Operation not permitted); nothing ran."])
def test_a_sandbox_failure_makes_the_next_call_probe_again(error: str, inproc: Hook, job: JobDir,
                                                           payload: Payloads) -> None:
    job.plan(PLAN)
    env = {"HOME": str(job.home)}
    assert os.path.exists(probe.cache_path(env))
    inproc("PostToolUseFailure", payload("post_tool_use_failure_bash", error=f"Exit code 1\n{error}"))
    assert not os.path.exists(probe.cache_path(env))


def test_the_launcher_runs_nothing_when_it_cannot_mount_the_jobs_tmp(tmp_path: Any) -> None:
    marker = tmp_path / "ran"
    layer = ["/tmp", str(tmp_path / "upper"), str(tmp_path / "work"), str(tmp_path / "no-such-view")]
    code = subprocess.run([sys.executable, "-I", "-S", scratch.HERE, *layer, "--", "/bin/sh", "-c", f": > {marker}"],
                          capture_output=True, text=True, timeout=30)
    assert code.returncode == 1 and code.stderr.startswith(scratch.FAILED) and not marker.exists(), code.stderr


@pytest.fixture
def background(job: JobDir) -> Iterator[None]:
    """A sandboxed command of this job still running: its bwrap holds the run's lock."""
    job.plan(PLAN)
    files = runs.start(str(job.state), "toolu_bg", {"command": "npm run dev", "checked": True})
    bwrap = probe.find_bwrap()
    assert bwrap
    proc = subprocess.Popen([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user",
                             "--cap-drop", "ALL", "--lock-file", files["lock"], "--", "sleep", "30"])
    deadline = time.monotonic() + 5
    while not runs.lock_held(files["lock"]):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    yield
    proc.kill()
    proc.wait()


def test_write_waits_for_a_sandboxed_command_running_in_the_background(background: None, hook: Hook, job: JobDir,
                                                                      payload: Payloads) -> None:
    result = hook("PreToolUse", write(payload, job.path("src/a.py")))
    assert result.denied and "the sandboxed command `npm run dev` is still running" in result.reason
    assert result.reason.endswith("[baton:background]")
    assert not hook("PreToolUse", bash(payload, "ls")).denied, "Bash still runs (sandboxed)"


def test_write_waits_for_a_background_command_allowed_and_not_started_yet(hook: Hook, job: JobDir,
                                                                          payload: Payloads) -> None:
    """The race of a background command: PreToolUse allowed it, Claude Code started its shell and ran
    PostToolUse, and the shell has not reached baton's script yet (here it never does). A Write judged
    then is refused, the run's files stay for the shell that will source them, and the wait is bounded."""
    job.plan(PLAN)
    (job.project / "src").mkdir()
    result = hook("PreToolUse", bash(payload, "ls src", run_in_background=True))
    if not hook.sandboxed:
        pytest.skip("no sandbox here: no run on record")
    assert result.decision == "allow", result
    denied = hook("PreToolUse", write(payload, job.path("src/a.py")))
    assert denied.denied and "`ls src` was allowed and its shell has not started yet" in denied.reason, denied
    assert denied.reason.endswith("[baton:background]")
    hook("PostToolUse", payload("post_tool_use_bash", tool_input={"command": result.command, "description": "run",
                                                                  "run_in_background": True}, tool_use_id="toolu_5"))
    assert {p.suffix for p in (job.state / "run").glob("toolu_5.*")} >= {".json", ".sh", ".args", ".lock"}
    assert hook("PreToolUse", write(payload, job.path("src/a.py"))).denied, "its PostToolUse does not end it"
    record = json.loads((job.state / "run" / "toolu_5.json").read_text())
    past = time.time() - runs.PENDING_SECONDS - 1
    runs.save(str(job.state), "toolu_5", {**record, "at": past, "posted": past})
    allowed = hook("PreToolUse", write(payload, job.path("src/a.py")))
    assert not allowed.denied, "a call refused by the person, or whose shell never came, holds writes only so long"


def test_a_command_the_person_is_asked_about_holds_writes_only_once_it_ran(hook: Hook, job: JobDir,
                                                                          payload: Payloads) -> None:
    """Asked, it may be refused (no hook says so): a Write goes on. Allowed and started in the background,
    its PostToolUse makes it count until its shell has started."""
    job.plan(PLAN)
    (job.project / "src").mkdir()
    asked = hook("PreToolUse", bash(payload, "make dev", run_in_background=True))
    if not hook.sandboxed:
        pytest.skip("no sandbox here: no run on record")
    assert asked.decision == "ask", asked
    assert not hook("PreToolUse", write(payload, job.path("src/a.py"))).denied, "refused, or not allowed yet"
    hook("PostToolUse", payload("post_tool_use_bash", tool_input={"command": asked.command, "description": "run",
                                                                  "run_in_background": True}, tool_use_id="toolu_5"))
    denied = hook("PreToolUse", write(payload, job.path("src/a.py")))
    assert denied.denied and "`make dev` was allowed and its shell has not started yet" in denied.reason, denied


def as_claude_code_would(result: hookkit.Result, tool_input: Dict[str, Any]) -> None:
    """Write or Edit the file after PreToolUse's answer, as Claude Code would: nothing on deny."""
    if result.denied:
        return
    path = tool_input["file_path"]
    if "content" in tool_input:
        with open(path, "w") as handle:  # Claude Code opens the path it was given; a hard link's other names change
            handle.write(tool_input["content"])
        return
    with open(path) as handle:
        text = handle.read()
    with open(path, "w") as handle:
        handle.write(text.replace(tool_input["old_string"], tool_input["new_string"], 1))


HARD_LINK_CASES = {  # the other name of src/notes.txt, the step may write only src/**
    "outside the writes": ("README.md", "hard-link", "it has 2 hard links"),
    "a protected file": ("secrets/token", "hard-link", "it has 2 hard links"),
    "the ledger": (".baton/steps.jsonl", "own-files", "it is a hard link to steps.jsonl in "),
}


@pytest.mark.parametrize("tool", ["Write", "Edit"])
@pytest.mark.parametrize("case", sorted(HARD_LINK_CASES))
def test_write_and_edit_through_a_hard_link_change_nothing_else(case: str, tool: str, hook: Hook, job: JobDir,
                                                                 payload: Payloads) -> None:
    """Tested by doing: the call is asked, then done as Claude Code would do it after the answer."""
    job.plan({**PLAN, "protect": ["secrets/**"]}).record("build", "running", "x")
    (job.project / "src").mkdir()
    (job.project / "secrets").mkdir()
    (job.project / "README.md").write_text("hello world\n")
    (job.project / "secrets" / "token").write_text("hello world\n")
    other, code, phrase = HARD_LINK_CASES[case]
    if other == ".baton/steps.jsonl":
        job.layout.ledger.write_bytes(job.layout.ledger.read_bytes() + b'{"hello world": 1}\n')
    os.link(job.project / other, job.project / "src" / "notes.txt")
    before = (job.project / other).read_bytes()
    tool_input = ({"file_path": job.path("src/notes.txt"), "content": "pwned\n"} if tool == "Write" else
                  {"file_path": job.path("src/notes.txt"), "old_string": "world", "new_string": "pwned"})
    name = "pre_tool_use_write" if tool == "Write" else "pre_tool_use_edit"
    result = hook("PreToolUse", payload(name, tool_input=tool_input))
    as_claude_code_would(result, tool_input)
    assert (job.project / other).read_bytes() == before, result.reason
    assert result.denied and phrase in result.reason and result.reason.endswith(f"[baton:{code}]"), result.reason
    assert "Remove this name" in result.reason


def test_a_file_with_one_name_is_written_and_no_job_means_no_guess(hook: Hook, job: JobDir,
                                                                     payload: Payloads) -> None:
    """The same calls do write when no other name is involved, and without a job only baton's own
    files count as other names."""
    (job.project / "src").mkdir()
    (job.project / "README.md").write_text("hello\n")
    os.link(job.project / "README.md", job.project / "src" / "linked.txt")
    tool_input = {"file_path": job.path("src/linked.txt"), "content": "changed\n"}
    result = hook("PreToolUse", payload("pre_tool_use_write", tool_input=tool_input))
    assert not result.denied, result.reason  # no job: nothing restricts where it writes
    job.plan(PLAN)
    (job.project / "src" / "single.txt").write_text("one name\n")
    tool_input = {"file_path": job.path("src/single.txt"), "content": "written\n"}
    result = hook("PreToolUse", payload("pre_tool_use_write", tool_input=tool_input))
    as_claude_code_would(result, tool_input)
    assert (job.project / "src" / "single.txt").read_text() == "written\n", result.reason


@pytest.mark.parametrize("target", [".claude/settings.json", ".mcp.json", ".git/hooks/pre-commit", ".envrc",
                                    "~/.bashrc", "~/.claude/settings.json"])
def test_no_tool_writes_what_runs_code_later(target: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["open"]})
    path = str(job.home) + target[1:] if target.startswith("~") else job.path(target)
    result = hook("PreToolUse", write(payload, path))
    assert result.denied and result.reason.endswith("[baton:runs-code]"), result.reason
    assert hook("PreToolUse", bash(payload, f"echo x > {path}")).denied


def test_status_and_brief_say_whether_the_gates_are_enforced(hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLAN)
    status = hook("UserPromptSubmit", payload("user_prompt_submit_command", prompt="/baton:status")).reason
    brief = hook("UserPromptSubmit", payload("user_prompt_submit_command", prompt="/baton:brief")).reason
    flat = " ".join(status.split())  # the dashboard wraps at 80 columns
    if hook.sandboxed:
        assert "\ngates  Bash runs in baton's sandbox (bubblewrap), enforced by the kernel\n" in status
        assert "GATES" not in brief
    else:
        assert "gates best effort: baton's sandbox cannot run here (bubblewrap is unavailable in this test); Bash " \
               "commands are only read" in flat
        assert brief.splitlines()[-1].startswith("GATES: best effort")


def test_gatemodes_forces_the_fallback(job: JobDir) -> None:
    gatemodes.force_fallback(job.home)
    assert not probe.bubblewrap({"HOME": str(job.home)}).ok


def test_post_tool_use_reads_batons_own_command_back_from_its_absolute_path_form(hook: Hook, job: JobDir,
                                                                                  payload: Payloads) -> None:
    """Claude Code reports the command it ran: for `baton record`, the form by absolute paths. The
    event names the model's command, and the model is told its new NEXT."""
    job.plan(PLAN)
    result = hook("PreToolUse", bash(payload, 'baton record build done "built it"'))
    assert "/bin/baton' 'record'" in result.command, result
    ran = subprocess.run(["/bin/bash", "-c", result.command], cwd=job.project, capture_output=True, text=True,
                         env={**os.environ, "HOME": str(job.home)})
    assert ran.returncode == 0, ran.stderr
    after = hook("PostToolUse", payload("post_tool_use_bash", tool_input={"command": result.command,
                                                                          "description": "run"}))
    assert "NEXT: ship" in after.context, after
    assert job.events()[-1]["target"] == "baton 'record' 'build' 'done' 'built it'"
