"""Whether a prompt came from the person's own session: a Claude Code launched by another one carries
its markers in its launch environment, or has its Bash tool's shell among its parents."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from store.cli import origin
from store.cli import prompt as commands
from store.state.location import Layout


def running(argv: List[str], env: Dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, env=env)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[0] != argv[0].encode():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


@pytest.fixture
def procs() -> Iterator[List[subprocess.Popen[bytes]]]:
    started: List[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def plain_env() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}


def test_a_cli_launched_with_a_sessions_markers_is_nested(procs: List[subprocess.Popen[bytes]]) -> None:
    procs.append(running(["sleep", "30"], {**plain_env(), "CLAUDECODE": "1"}))
    why = origin.nested_session({"CLAUDE_PID": str(procs[-1].pid)})
    assert why == "its Claude Code was launched with CLAUDECODE set, by another Claude Code session"


def test_a_cli_started_from_a_bash_tool_shell_is_nested(tmp_path: Path, procs: List[subprocess.Popen[bytes]]) -> None:
    snapshot = tmp_path / ".claude" / "shell-snapshots" / "snapshot-bash-1-x.sh"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text("")
    child = tmp_path / "child.pid"
    shell = running(["/bin/bash", "-c", f"source {snapshot}; (exec env sleep 30) & echo $! > {child}; wait"],
                    plain_env())
    procs.append(shell)
    deadline = time.monotonic() + 10
    while not child.exists() or not child.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    why = origin.nested_session({"CLAUDE_PID": child.read_text().strip()})
    assert why is not None and why.startswith("its Claude Code was started from another Claude Code session")


def test_a_cli_started_by_a_person_or_a_program_is_not(procs: List[subprocess.Popen[bytes]]) -> None:
    procs.append(running(["sleep", "30"], plain_env()))
    assert origin.nested_session({"CLAUDE_PID": str(procs[-1].pid)}) is None
    assert origin.nested_session({}) is None and origin.nested_session({"CLAUDE_PID": "x; rm"}) is None


def test_approve_from_a_nested_session_is_refused_and_changes_nothing(tmp_path: Path,
                                                                      procs: List[subprocess.Popen[bytes]]) -> None:
    layout = Layout(tmp_path / ".baton", tmp_path)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"steps": [{"id": "d", "approval": True}]}))
    procs.append(running(["sleep", "30"], {**plain_env(), "CLAUDE_CODE_SESSION_ID": "outer"}))
    env = {"HOME": str(tmp_path), "CLAUDE_PID": str(procs[-1].pid), "CLAUDE_CODE_SESSION_ID": "inner"}
    text = commands.run("approve", "d", layout, env)
    assert text.startswith("baton: refused /baton:approve: this prompt did not come from the person's own session")
    assert text.endswith("[baton:nested-session]") and not layout.ledger.exists()
