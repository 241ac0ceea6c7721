"""The Agent SDK example (`examples/agent_sdk.py`) runs a job through `claude-agent-sdk` and the pinned
CLI against the scripted API: the plugin is loaded, each session goes into the ledger, and after an
API error the same session is resumed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .driver import REPO, Claude
from .fakeapi import FakeAPI, all_text_of, overloaded, text, tool_use
from .jobstate import ledger, write_plan

EXAMPLE = REPO / "examples" / "agent_sdk.py"
pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="claude-agent-sdk needs Python 3.10 or newer")


def record(step: str) -> list[dict[str, object]]:
    command = f'baton record {step} done "{step} done through the SDK"'
    return [tool_use("Bash", {"command": command, "description": f"record {step}"})]


def test_the_sdk_example_runs_a_job_records_its_sessions_and_resumes_after_an_api_error(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [record("a"), overloaded(), record("b"), [text("both steps are done")]]
    env = claude.env({"CLAUDE_CODE_MAX_RETRIES": "0"})  # so the 529 ends the session
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--project", str(project), "--plugin", str(plugin_copy),
         "--cli", str(claude.exe), "--first-wait", "0.1"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stdout + done.stderr
    first, second = [r for r in ledger(project) if r["status"] == "session"]
    assert (first["ended"], second["ended"]) == ("api_error", "completed")
    assert first["session"] and second["session"] == first["session"]  # resumed, not a new session
    assert second["cost_usd"] == 2 * first["cost_usd"] > 0  # the cumulative total, counted once
    assert [r["step"] for r in ledger(project) if r["status"] == "done"] == ["a", "b"]
    requests = fake_api.requests_main()
    assert "PLAN: a, b" in all_text_of(requests[0])  # the plugin's brief reached the first session
    assert "baton record a done" in all_text_of(requests[2])  # the resumed session kept its conversation
    assert done.stdout.splitlines() == [f"session {first['session']}: api_error; NEXT b",
                                        f"session {first['session']}: completed; NEXT (none)", "done: 2 of 2 steps"]
