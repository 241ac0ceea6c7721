"""The end-to-end harness itself, proven against the real CLI with a tiny probe plugin."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .driver import Claude
from .fakeapi import DROP, EXHAUSTED_TEXT, HANG, FakeAPI, all_text_of, overloaded, text, tool_results, tool_use
from .processes import group_gone, tagged_gone

SESSION_START_PY = """\
import json
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                         "additionalContext": "PROBE-CTX"}}))
"""

LINGER_PY = """\
import os, sys, time
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(300)
"""


def write_probe_plugin(
    root: Path, hooks: dict[str, list[dict[str, Any]]], scripts: dict[str, str]
) -> Path:
    """A minimal plugin named `probe` at `root` with these hooks and hooks/<name> scripts."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    manifest = {"name": "probe", "version": "0.0.1", "description": "Harness probe plugin."}
    (root / ".claude-plugin/plugin.json").write_text(json.dumps(manifest))
    (root / "hooks/hooks.json").write_text(json.dumps({"hooks": hooks}))
    for name, source in scripts.items():
        (root / "hooks" / name).write_text(source)
    return root


def python_hook(script: str, *args: str, **options: Any) -> dict[str, Any]:
    """An exec-form command hook running hooks/<script> with this interpreter."""
    argv = [f"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}", *args]
    return {"type": "command", "command": sys.executable, "args": argv, **options}


def test_bash_tool_runs_and_its_result_reaches_the_model(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    fake_api.script = [
        [text("writing"), tool_use("Bash", {"command": "echo hi > out.txt", "description": "w"})],
        [text("done")],
    ]
    run = claude.run("write the file", cwd=project)

    assert run.returncode == 0, run.stderr
    assert (project / "out.txt").read_text() == "hi\n"
    assert run.result == "done"
    assert run.output is not None and run.output["num_turns"] == 2
    first, second = fake_api.requests_main()
    assert "write the file" in all_text_of(first)
    assert tool_results(first) == []
    tool_call = second["messages"][-2]["content"][-1]
    assert tool_call["type"] == "tool_use" and tool_call["name"] == "Bash"
    [result] = tool_results(second)
    assert result.tool_use_id == tool_call["id"]
    assert not result.is_error


def test_exhausted_script_ends_the_session(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    run = claude.run("anything", cwd=project)

    assert run.returncode == 0, run.stderr
    assert run.result == EXHAUSTED_TEXT
    assert len(fake_api.requests_main()) == 1


def test_session_start_context_reaches_the_first_request(
    claude: Claude, fake_api: FakeAPI, project: Path, tmp_path: Path
) -> None:
    plugin = write_probe_plugin(
        tmp_path / "probe-plugin",
        {"SessionStart": [{"hooks": [python_hook("session_start.py")]}]},
        {"session_start.py": SESSION_START_PY},
    )
    fake_api.script = [[text("seen")]]
    run = claude.run("hello", cwd=project, plugin_dir=plugin)

    assert run.returncode == 0, run.stderr
    [first] = fake_api.requests_main()
    assert "SessionStart hook additional context: PROBE-CTX" in all_text_of(first)


def test_resume_continues_the_same_conversation(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    fake_api.script = [[text("first answer")], [text("second answer")]]
    first = claude.run("FIRST-PROMPT", cwd=project)
    second = claude.run("SECOND-PROMPT", cwd=project, resume=first.session_id)

    assert second.returncode == 0, second.stderr
    assert second.session_id == first.session_id
    assert second.result == "second answer"
    resumed = all_text_of(fake_api.requests_main()[1])
    assert "FIRST-PROMPT" in resumed and "first answer" in resumed
    assert resumed.index("FIRST-PROMPT") < resumed.index("SECOND-PROMPT")


def wait_for_file(path: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


def test_killing_a_hung_session_leaves_no_process(
    claude: Claude, fake_api: FakeAPI, project: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "linger.pid"
    plugin = write_probe_plugin(
        tmp_path / "probe-plugin",
        {
            "UserPromptSubmit": [
                {"hooks": [python_hook("linger.py", str(pid_file), **{"async": True})]}
            ]
        },
        {"linger.py": LINGER_PY},
    )
    fake_api.script = [HANG]
    proc = claude.start("go", cwd=project, plugin_dir=plugin)
    assert fake_api.wait_until_hanging(60), "the CLI never asked for its first turn"
    linger = int(wait_for_file(pid_file, timeout=10))
    linger_group = os.getpgid(linger)
    assert {proc.pid, linger} <= set(claude.live_pids())
    # The CLI gives each hook a process group of its own: killing the CLI's does not reach it.
    assert linger_group != proc.pid

    os.killpg(proc.pid, signal.SIGKILL)
    stdout, _ = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert stdout == ""
    assert group_gone(proc.pid)
    assert linger in claude.live_pids()

    claude.kill_all()
    assert group_gone(linger_group)
    assert tagged_gone(claude.tag)
    assert len(fake_api.requests_main()) == 1


def test_an_api_error_that_outlasts_the_retries_ends_the_session_with_its_status(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    fake_api.script = [overloaded(), [text("never reached")]]
    run = claude.run("go", cwd=project, env={"CLAUDE_CODE_MAX_RETRIES": "0"})

    assert run.returncode == 1
    assert run.output is not None
    assert (run.output["is_error"], run.output["terminal_reason"]) == (True, "api_error")
    assert (run.output["api_error_status"], run.output["api_error_type"]) == (529, "overloaded_error")
    assert run.result.startswith("API Error: 529 Overloaded")
    assert len(fake_api.requests_main()) == 1


def test_claude_code_waits_a_retry_after_of_its_own_and_only_says_so_while_retrying(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    fake_api.script = [overloaded(retry_after=1), overloaded(retry_after=1), [text("never reached")]]
    started = time.monotonic()
    run = claude.run("go", cwd=project, env={"CLAUDE_CODE_MAX_RETRIES": "1"})

    assert time.monotonic() - started >= 1.0  # it honoured the header before its one retry
    assert run.returncode == 1 and run.output is not None
    assert run.output["api_error_status"] == 529
    assert [key for key in run.output if "retry" in key.lower()] == []  # the result never carries the wait
    assert len(fake_api.requests_main()) == 2


def test_a_dropped_connection_is_an_api_error_without_a_status(
    claude: Claude, fake_api: FakeAPI, project: Path
) -> None:
    fake_api.script = [DROP, [text("never reached")]]
    run = claude.run("go", cwd=project, env={"CLAUDE_CODE_MAX_RETRIES": "0"})

    assert run.returncode == 1 and run.output is not None
    assert (run.output["terminal_reason"], run.output["api_error_status"]) == ("api_error", None)
    assert run.output["api_error"] == "connection_failed"
    assert "Connection dropped" in run.result
