"""`baton run` drives the real Claude Code CLI until the job is done, and survives what kills sessions.

Each test starts `baton run` as a person would (the plugin copy's `bin/baton`, the pinned CLI, the
copy as `--plugin-dir`, short waits), against the scripted Messages API: an overloaded API, a
SIGKILLed Claude Code, a step waiting for a person, the job's turn limit, a model that never
records anything, and SIGTERM to the run itself. The scripts are plain lists: every session of a
run takes the next turns from the same list.
"""

from __future__ import annotations

import os
import pty
import shlex
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from .driver import Claude
from .fakeapi import ApiError, FakeAPI, all_text_of, overloaded, text, tool_use
from .jobstate import baton, ledger, write_plan
from .processes import tagged_gone
from .runs import run_to_end, start_run, wait_for_process

SLEEPER = 'python3 -c "import time; time.sleep(300)"'


def record(step: str, status: str = "done") -> list[dict[str, Any]]:
    command = f'echo {step} > {step}.out && baton record {step} {status} "{step} {status} by the model"'
    return [tool_use("Bash", {"command": command, "description": f"record {step}"})]


def sleeper() -> list[dict[str, Any]]:
    return [tool_use("Bash", {"command": SLEEPER, "description": "a long side effect"})]


def sessions_in(project: Path) -> list[dict[str, Any]]:
    return [r for r in ledger(project) if r["status"] == "session"]


def done_counts(project: Path) -> Counter[str]:
    return Counter(r["step"] for r in ledger(project) if r["status"] == "done")


def test_an_overloaded_api_is_waited_out_with_growing_waits(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"job": "overloaded", "steps": ["a", "b"]})
    fake_api.script = [overloaded(), overloaded(), overloaded(), record("a"), record("b"), [text("all done")]]

    code, run = run_to_end(claude, plugin_copy, project, "--first-wait", "0.2",
                           env={"CLAUDE_CODE_MAX_RETRIES": "0"})  # Claude Code's own retries off

    assert code == 0, run.stderr
    ended = [e["ended"] for e in run.of("session_end")]
    assert ended == ["api_error", "api_error", "api_error", "completed"]
    assert all("529 overloaded_error" in e["detail"] for e in run.of("session_end")[:3])
    waits = [e["seconds"] for e in run.of("wait")]
    assert len(waits) == 3 and waits[0] < waits[1] < waits[2], waits
    assert 0.1 <= waits[0] <= 0.2 and 0.4 <= waits[2] <= 0.8, waits  # 0.2 doubled, equal jitter
    assert [r["ended"] for r in sessions_in(project)] == ended
    assert all(r["session"] for r in sessions_in(project))  # Claude Code gave each one an id
    assert done_counts(project) == {"a": 1, "b": 1}
    assert run.of("stop")[0]["outcome"] == "done"


def test_a_retry_after_that_claude_code_reports_sets_the_wait(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    fake_api.script = [overloaded(retry_after=1), overloaded(retry_after=1), record("a"), [text("done")]]

    code, run = run_to_end(claude, plugin_copy, project, "--first-wait", "0.05",
                           env={"CLAUDE_CODE_MAX_RETRIES": "1"})  # one retry of its own, after the retry-after

    assert code == 0, run.stderr
    [retry] = run.of("api_retry")
    assert retry["status"] == 529 and retry["delay_s"] >= 1.0
    [wait] = run.of("wait")
    assert wait["retry_after"] == retry["delay_s"] and wait["seconds"] >= 1.0  # not 0.05
    assert [e["ended"] for e in run.of("session_end")] == ["api_error", "completed"]


def test_a_killed_claude_code_is_started_again_and_no_step_is_recorded_twice(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"job": "killed", "steps": ["a", "b", "c"]})
    fake_api.script = [
        record("a"), record("b", "running"), sleeper(),  # killed here, in the middle of b
        record("b"), record("c"), [text("all three are done")],
    ]
    run = start_run(claude, plugin_copy, project, env={"OTEL_RESOURCE_ATTRIBUTES": "team=infra"})
    first = run.wait_for(lambda e: e.get("event") == "session_start")
    sleeping = wait_for_process(claude, "time.sleep(300)")
    # Claude Code's own telemetry is tagged with the job (Claude Code keeps OTEL_* from its Bash tool)
    environ = Path(f"/proc/{first['pid']}/environ").read_bytes().split(b"\0")
    assert b"OTEL_RESOURCE_ATTRIBUTES=team=infra,baton.job.id=killed" in environ

    os.kill(first["pid"], signal.SIGKILL)  # Claude Code only, as an out-of-memory killer would
    code = run.finish()

    assert code == 0, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["killed", "completed"]
    assert "killed by SIGKILL" in run.of("session_end")[0]["detail"]
    assert done_counts(project) == {"a": 1, "b": 1, "c": 1}
    second_session = [r for r in fake_api.requests_main() if "LEFT RUNNING: b" in all_text_of(r)]
    assert second_session, "the new session was not told that b was left running"
    assert sleeping not in claude.live_pids()  # the killed session's Bash command did not outlive it
    assert tagged_gone(claude.tag, timeout=10)
    killed, completed = sessions_in(project)
    assert (killed["ended"], killed["exit"], killed["step"]) == ("killed", -9, "a")
    assert completed["ended"] == "completed" and completed["session"] != killed["session"]
    assert baton(plugin_copy, project, claude.home, "verify").returncode == 0


def test_a_step_waiting_for_approval_stops_the_run_until_a_person_approves(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", {"id": "b", "title": "ship it", "approval": True}]})
    fake_api.script = [record("a"), [text("b waits for a person")], record("b"), [text("b is shipped")]]
    notified = project.parent / "notified.txt"

    code, run = run_to_end(claude, plugin_copy, project,
                           "--notify", f'echo "$BATON_OUTCOME $BATON_EXIT_CODE $BATON_NEXT" > {notified}')

    assert code == 3, run.stderr
    assert notified.read_text() == "approval 3 b\n"
    assert run.of("notify")[0]["exit_code"] == 0
    [stop] = run.of("stop")
    assert stop["outcome"] == "approval" and stop["next"] == "b"
    approve = next(line.split("approve:", 1)[1].strip() for line in stop["message"].splitlines()
                   if "approve:" in line)
    assert approve == shlex.join([str(claude.exe), "--plugin-dir", str(plugin_copy), "-p", "/baton:approve b"])
    assert [e["ended"] for e in run.of("session_end")] == ["approval"]

    # The person runs exactly that in a terminal (not inside any Claude Code session): no model call.
    calls = len(fake_api.log)
    approved = subprocess.run(shlex.split(approve), cwd=project, env=claude.env(), capture_output=True,
                              text=True, timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert "approved b" in approved.stdout
    assert fake_api.log[calls:] == []
    assert ledger(project)[-1]["status"] == "approved" and ledger(project)[-1]["by"] == "person"

    code, again = run_to_end(claude, plugin_copy, project)

    assert code == 0, again.stderr
    assert done_counts(project) == {"a": 1, "b": 1}
    assert [r["ended"] for r in sessions_in(project)] == ["approval", "completed"]


def test_the_turn_limit_stops_the_run_with_the_next_instruction_in_the_ledger_and_the_brief(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b", {"id": "c", "title": "write the report"}], "limits": {"turns": 2}})
    fake_api.script = [record("a"), [text("a is done")], record("b"), [text("b is done")], record("c")]

    code, run = run_to_end(claude, plugin_copy, project)

    assert code == 4, run.stderr
    # Each session is capped by what is left: 2 turns, then 1 after the Stop hook counted one.
    assert [e["max_turns"] for e in run.of("session_start")] == [2, 1, 1]
    assert [e["ended"] for e in run.of("session_end")] == ["turn_cap", "turn_cap", "limit"]
    assert done_counts(project) == {"a": 1, "b": 1}
    stop = ledger(project)[-1]
    assert (stop["status"], stop["step"], stop["outcome"]) == ("stop", "c", "limit")
    assert stop["note"] == ("limit reached: turns 2 of 2. NEXT: c - write the report. To go on, raise "
                            "limits.turns in .baton/plan.json, then run `baton run` again.")
    brief = baton(plugin_copy, project, claude.home, "brief").stdout
    assert "NEXT: c - write the report" in brief
    assert "LIMIT: turns 2 of 2 reached" in brief and "raise limits.turns in .baton/plan.json" in brief
    again = shlex.join(run.proc.args[2:])  # type: ignore[index]  # the run's own command line, from `run` on
    assert run.of("stop")[0]["message"] == stop["note"].replace("`baton run`", f"`baton {again}`")


def test_a_model_that_never_records_anything_stops_after_the_idle_sessions(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = lambda body: [text("I am finished.")]

    code, run = run_to_end(claude, plugin_copy, project, "--max-idle-sessions", "2")

    assert code == 5, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["completed", "completed"]
    assert all(e["recorded"] == [] for e in run.of("session_end"))
    stop = ledger(project)[-1]
    assert (stop["status"], stop["outcome"], stop["step"]) == ("stop", "idle", "a")
    assert stop["note"].startswith("no progress: 2 session(s) in a row recorded nothing")
    assert not [r for r in ledger(project) if r["status"] == "done"]


def test_sigterm_stops_the_run_leaves_no_process_and_a_second_run_is_refused(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [record("a"), sleeper(), record("b"), [text("done")]]
    run = start_run(claude, plugin_copy, project)
    run.wait_for(lambda e: e.get("event") == "session_start")
    wait_for_process(claude, "time.sleep(300)")

    second = subprocess.run(
        ["python3", str(plugin_copy / "bin" / "baton"), "run", "--claude", str(claude.exe)],
        cwd=project, env=claude.env(), capture_output=True, text=True, timeout=60)
    assert second.returncode == 7
    assert f"another baton run is already running this job (pid {run.proc.pid}," in second.stderr

    run.proc.send_signal(signal.SIGTERM)
    code = run.finish(timeout=60)

    assert code == 130, run.stderr
    assert tagged_gone(claude.tag, timeout=2), "a process outlived baton run"
    assert [e["ended"] for e in run.of("session_end")] == ["interrupted"]
    [stop] = run.of("stop")
    assert (stop["outcome"], stop["signal"]) == ("interrupted", "SIGTERM")
    session, stopped = ledger(project)[-2:]
    assert (session["status"], session["ended"]) == ("session", "interrupted")
    assert session["exit"] == 128 + signal.SIGTERM  # Claude Code got the SIGTERM itself and cleaned up
    assert (stopped["status"], stopped["outcome"], stopped["step"]) == ("stop", "interrupted", "b")
    assert stopped["note"].startswith("interrupted by SIGTERM. NEXT: b.")


def test_resume_policy_resumes_the_session_an_api_error_ended_and_counts_its_cost_once(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [record("a"), overloaded(), record("b"), [text("both done")]]

    code, run = run_to_end(claude, plugin_copy, project, "--resume-policy", "resume",
                           env={"CLAUDE_CODE_MAX_RETRIES": "0"})

    assert code == 0, run.stderr
    first, second = sessions_in(project)
    assert (first["ended"], second["ended"]) == ("api_error", "completed")
    assert second["session"] == first["session"]
    assert run.of("session_start")[1]["resume"] == first["session"]
    resumed = fake_api.requests_main()[2]
    assert "baton record a done" in all_text_of(resumed)  # the conversation was kept
    # Claude Code reports a resumed session's cost cumulatively; the ledger holds each part once:
    # three answered requests in all, the first session's one of them.
    assert second["cost_usd"] == 2 * first["cost_usd"] > 0


def test_an_api_error_that_retrying_cannot_fix_stops_the_run_at_once(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    fake_api.script = [ApiError(401, "authentication_error", "invalid x-api-key")]

    code, run = run_to_end(claude, plugin_copy, project, env={"CLAUDE_CODE_MAX_RETRIES": "0"})

    assert code == 6, run.stderr
    assert run.of("wait") == [] and len(run.of("session_end")) == 1
    stop = ledger(project)[-1]
    assert (stop["status"], stop["outcome"]) == ("stop", "api")
    assert stop["note"].startswith("stopped after an API error that retrying will not fix: 401 authentication_error")


def test_api_errors_beyond_max_retries_stop_the_run(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    fake_api.script = lambda body: overloaded()

    code, run = run_to_end(claude, plugin_copy, project, "--max-retries", "2", env={"CLAUDE_CODE_MAX_RETRIES": "0"})

    assert code == 6, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["api_error"] * 3 and len(run.of("wait")) == 2
    assert "3 API errors in a row (--max-retries), the last: 529 overloaded_error" in ledger(project)[-1]["note"]


def test_a_claude_code_that_cannot_start_a_session_is_no_progress(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})

    code, run = run_to_end(claude, plugin_copy, project, "--max-idle-sessions", "2", claude_args=["--no-such-flag"])

    assert code == 5, run.stderr
    assert [e["ended"] for e in run.of("session_end")] == ["crashed", "crashed"]
    assert "unknown option '--no-such-flag'" in ledger(project)[-1]["note"]
    assert fake_api.requests_main() == []


def test_a_session_without_the_baton_plugin_is_stopped_at_once(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    fake_api.script = lambda body: [text("working without baton")]
    run = subprocess.run(["python3", str(plugin_copy / "bin" / "baton"), "run", "--claude", str(claude.exe)],
                         cwd=project, env=claude.env(), capture_output=True, text=True, timeout=120)

    assert run.returncode == 2
    assert "Claude Code did not load the baton plugin" in run.stderr and "--plugin-dir DIR" in run.stderr
    [session] = sessions_in(project)
    assert session["ended"] == "no_plugin"
    assert tagged_gone(claude.tag, timeout=5)


def test_on_a_terminal_a_status_line_is_redrawn_while_a_session_runs(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a"]})
    slow = tool_use("Bash", {"command": 'python3 -c "import time; time.sleep(2)"', "description": "work"})
    fake_api.script = [[slow], record("a"), [text("done")]]
    main, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            ["python3", str(plugin_copy / "bin" / "baton"), "run", "--claude", str(claude.exe), "--plugin-dir",
             str(plugin_copy), "--", "--permission-mode", "acceptEdits", "--allowedTools", "Bash"],
            cwd=project, env=claude.env(), stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal's other end closed: everything was read
                break
            if not chunk:
                break
            shown += chunk
        assert proc.wait(timeout=120) == 0
    finally:
        os.close(main)
    text_shown = shown.decode()
    assert "\r\x1b[2K  session 1 running " in text_shown  # redrawn in place
    assert "\r\x1b[2Ksession 1 ended: completed" in text_shown  # cleared before the next line
