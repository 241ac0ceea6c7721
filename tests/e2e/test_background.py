"""A job in a background session (`claude --bg`), driven offline against the scripted API.

Claude Code 2.1.328 starts a background service that runs the session; the session is an
interactive one without a terminal (`--session-id <id> PROMPT`, no `-p`), so baton's hooks run as
in any session: the brief at start, the Stop loop, the gate. It needs the project trusted and the
API key accepted in `~/.claude.json`, as a person's first interactive start records them. What
a background session does not get: parked approvals (Claude Code honours `defer` only in `-p`), and
a task budget (`--task-budget` is accepted but no request carries it). A step that waits for a person
ends the session's turn; after `/baton:approve`, `claude --bg --resume <session id>` goes on in the
background, in the same session.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docpages import section

from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text
from .jobstate import baton, ledger, write_plan
from .test_interactive import accept_terminal
from .test_run import record


@pytest.fixture(autouse=True)
def daemon(claude: Claude) -> Iterator[None]:
    """Claude Code's background service runs its sessions from /tmp/cc-daemon-<uid>/<id>/ (sockets),
    outside the test's folders: stop it, end whatever of this test's is left, and remove that folder."""
    folders: set[str] = set()
    pattern = re.compile(rf"(/tmp/cc-daemon-{os.getuid()}/[0-9a-f]{{8}})/")

    def note() -> None:
        for pid in claude.live_pids():
            try:
                folders.update(pattern.findall(Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")))
            except OSError:
                continue

    claude.note_daemon = note  # type: ignore[attr-defined]
    try:
        yield
    finally:
        note()
        subprocess.run([str(claude.exe), "daemon", "stop", "--any"], env=claude.env(), capture_output=True,
                       timeout=60, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while claude.live_pids() and time.monotonic() < deadline:  # a spare it started while stopping
            note()
            claude.kill_all()
            time.sleep(0.2)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def accept(claude: Claude, project: Path) -> None:
    """What a person's first interactive `claude` in the project leaves in ~/.claude.json, and the
    permissions the job needs in the project's settings, where every session finds them (a resumed
    background session does not get the flags its first start was given)."""
    accept_terminal(claude, project)
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"], "defaultMode": "acceptEdits"}}))


def install(claude: Claude, project: Path, plugin: Path) -> None:
    """baton installed as the README says (a background session resumed later does not keep a
    --plugin-dir its first start was given)."""
    done = cli(claude, project, "plugin", "install", "baton", "--marketplace", str(plugin))
    assert done.returncode == 0, done.stdout + done.stderr


def cli(claude: Claude, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(claude.exe), *args], cwd=project, env=claude.env(), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def background(claude: Claude, project: Path, *args: str) -> str:
    """`claude --bg ARGS` as a person types it; the short id it prints."""
    started = cli(claude, project, "--bg", *args)
    assert started.returncode == 0, started.stderr
    claude.note_daemon()  # type: ignore[attr-defined]  # where its service runs, to remove it after
    line = next(ln for ln in started.stdout.splitlines() if ln.startswith("backgrounded"))
    return line.split("\u00b7")[1].strip()


def wait_for(check: Any, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.3)


def done(project: Path) -> list[str]:
    return [r["step"] for r in ledger(project) if r["status"] == "done"]


def test_a_job_runs_to_its_end_in_a_background_session_and_an_approval_resumes_it_there(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": ["a", {"id": "ship", "approval": True}], "limits": {"tokens": 500_000}})
    accept(claude, project)
    install(claude, project, plugin_copy)
    fake_api.script = [record("a"), [text("ship waits for a person")], record("ship"), [text("all shipped")]]

    short = background(claude, project, "--task-budget", "40000", "Run the job in .baton/plan.json.")

    wait_for(lambda: done(project) == ["a"], "a recorded by the background session")
    listed = json.loads(cli(claude, project, "agents", "--json").stdout)
    [mine] = [s for s in listed if s["id"] == short]
    assert mine["kind"] == "background" and mine["cwd"] == str(project)
    first = fake_api.requests_main()[0]
    assert "NEXT: a" in all_text_of(first)  # baton's brief, from its SessionStart hook
    assert "task_budget" not in first["output_config"]  # accepted, and not sent outside -p
    wait_for(lambda: len(fake_api.requests_main()) >= 2, "the turn to end at the step that waits")
    time.sleep(2)
    assert done(project) == ["a"], "the session went past a step that waits for a person"

    approved = cli(claude, project, "-p", "/baton:approve ship")
    assert "approved ship" in approved.stdout, approved.stdout + approved.stderr
    # The session is still there, idle. Stopped first, and resumed with no other flag (it keeps the
    # options it was started with), it goes on itself; otherwise Claude Code starts a copy.
    stopped = cli(claude, project, "stop", short)
    assert stopped.returncode == 0, stopped.stderr
    again = background(claude, project, "--resume", mine["sessionId"], "Go on.")

    wait_for(lambda: done(project) == ["a", "ship"], "ship recorded after the approval")
    assert again == short  # the same session, resumed in the background
    records = [r for r in ledger(project) if r["status"] == "done"]
    assert {r["session"] for r in records} == {mine["sessionId"]}
    stopped = cli(claude, project, "stop", short)
    assert stopped.returncode == 0, stopped.stderr
    assert baton(plugin_copy, project, claude.home, "verify").returncode == 0


def test_baton_run_started_detached_as_the_docs_say_runs_the_job_after_its_shell_is_gone(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    install(claude, project, plugin_copy)
    fake_api.script = [record("a"), record("b"), [text("both done")]]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "claude").symlink_to(claude.exe)
    (shim / "baton").symlink_to(plugin_copy / "bin" / "baton")
    env = claude.env()
    env["PATH"] = f"{shim}:{env['PATH']}"
    line = next(ln.strip(" `") for ln in section("A job in a background session (`claude --bg`)").splitlines()
                if "setsid nohup baton run" in ln)

    shell = subprocess.run(["bash", "-c", line], cwd=project, env=env, capture_output=True, text=True, timeout=30,
                           start_new_session=True)

    assert shell.returncode == 0 and shell.stdout == "", shell.stderr  # back at once: the run is detached
    wait_for(lambda: done(project) == ["a", "b"], "the job done by the detached run")
    log = project / ".baton" / "run.log"
    wait_for(lambda: '"event":"stop"' in log.read_text(), "the run's stop event in its log")
    [stop] = [e for e in map(json.loads, log.read_text().splitlines()) if e["event"] == "stop"]
    assert (stop["outcome"], stop["exit_code"]) == ("done", 0)
