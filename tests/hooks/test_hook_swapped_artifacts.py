"""Files the model can swap never stall a hook (issue 29.11): a checkpoint artifact or input replaced
by a FIFO, a device or a symlink loop is reported at SessionStart within its deadline, and `baton
record` refuses such an artifact with a clear error instead of hanging; a FIFO planted where the
gate reads (the project's Claude Code settings, ``.npmrc``, a file an Edit changes under a
``deny_content`` rule) gets an answer, not a hook that never returns."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest
from conftest import Hook, JobDir, Payloads

if TYPE_CHECKING:
    from conftest import Baton  # type: ignore[attr-defined]

PLAN = {"steps": [{"id": "build", "inputs": ["src/**"], "artifacts": ["out/app.bin"]}, "ship"]}
STALL_SECONDS = 20  # how long a blocked reader is left waiting before the test frees it (and fails)


def unblock_later(fifo: Path) -> Callable[[], None]:
    """Open ``fifo`` for writing after a while, so a hook stuck reading it ends (the test then fails on
    time rather than hanging the suite); returns the function that stops the watchdog."""
    stop = threading.Event()

    def watchdog() -> None:
        if stop.wait(STALL_SECONDS):
            return
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    threading.Thread(target=watchdog, daemon=True).start()
    return stop.set


@pytest.fixture
def done_job(job: JobDir, baton: Baton) -> Iterator[JobDir]:
    (job.project / "out").mkdir()
    (job.project / "src").mkdir()
    (job.project / "src" / "main.c").write_text("int x;\n")
    (job.project / "out" / "app.bin").write_bytes(b"")  # empty: a FIFO has the same size, so only hashing tells
    job.plan(PLAN)
    assert baton("record", "build", "done", "built", cwd=job.project).code == 0
    yield job


def swap(path: Path, how: str) -> Path:
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "device":
        path.symlink_to("/dev/zero")  # endless, and its size says 0 as the recorded file's did
    else:
        path.symlink_to(path.name)  # a loop
    then = time.time() + 5
    os.utime(path, (then, then), follow_symlinks=how == "fifo")
    return path


@pytest.mark.parametrize("how", ["fifo", "device", "loop"])
def test_a_swapped_artifact_is_reported_without_stalling_session_start(
        how: str, hook: Hook, done_job: JobDir, payload: Payloads) -> None:
    artifact = swap(done_job.project / "out" / "app.bin", how)
    stop = unblock_later(artifact) if how == "fifo" else (lambda: None)
    started = time.monotonic()
    try:
        context = hook("SessionStart", payload("session_start_startup")).context
    finally:
        stop()
    assert time.monotonic() - started < 10, "SessionStart waited on the swapped artifact"
    changed = [line for line in context.splitlines() if line.startswith("CHANGED: build")]
    assert changed and "out/app.bin" in changed[0], context
    assert {"fifo": "a FIFO now", "device": "a device now", "loop": "missing"}[how] in changed[0]


def test_a_fifo_among_the_inputs_makes_the_step_stale_without_stalling(
        hook: Hook, done_job: JobDir, payload: Payloads) -> None:
    fifo = done_job.project / "src" / "pipe"
    os.mkfifo(fifo)
    stop = unblock_later(fifo)
    started = time.monotonic()
    try:
        context = hook("SessionStart", payload("session_start_startup")).context
    finally:
        stop()
    assert time.monotonic() - started < 10, "SessionStart waited on a FIFO among the inputs"
    assert any(line.startswith("STALE: build") for line in context.splitlines()), context


def test_recording_a_fifo_as_an_artifact_is_refused_not_hung(job: JobDir, baton: Baton) -> None:
    job.plan(PLAN)
    (job.project / "out").mkdir()
    fifo = job.project / "out" / "app.bin"
    os.mkfifo(fifo)
    stop = unblock_later(fifo)
    try:
        ran = baton("record", "build", "done", "built", cwd=job.project, timeout=STALL_SECONDS + 20)
    finally:
        stop()
    assert ran.code == 1, ran
    assert "out/app.bin is a FIFO" in ran.err and "nothing was recorded" in ran.err, ran.err
    assert not [r for r in job.ledger() if r.get("status") == "done"]


def answered_in_time(fifo: Path, run: Callable[[], Any]) -> Any:
    """``run()`` with a watchdog on ``fifo``; fails when it waited on the FIFO."""
    stop = unblock_later(fifo)
    started = time.monotonic()
    try:
        result = run()
    finally:
        stop()
    assert time.monotonic() - started < 10, "the hook waited on a FIFO the model planted"
    return result


def test_a_fifo_for_the_projects_claude_settings_does_not_stall_the_gate(
        inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(["a", "b"])
    (job.project / ".claude").mkdir(exist_ok=True)
    fifo = job.project / ".claude" / "settings.local.json"
    os.mkfifo(fifo)
    call = payload("pre_tool_use_bash", tool_input={"command": "ls", "description": "list"})
    result = answered_in_time(fifo, lambda: inproc("PreToolUse", call))
    assert result.decision in ("allow", "ask", "")  # answered as without the file


def test_a_fifo_for_npmrc_does_not_stall_the_hosts_rule(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a"], "rules": [{"id": "egress", "allow_hosts": ["pypi.org"], "reason": "pypi only"}]})
    fifo = job.project / ".npmrc"
    os.mkfifo(fifo)
    call = payload("pre_tool_use_bash", tool_input={"command": "npm publish", "description": "publish"})
    assert answered_in_time(fifo, lambda: inproc("PreToolUse", call)).denied


def test_an_edit_of_a_fifo_a_content_rule_covers_is_refused_not_hung(
        inproc: Hook, job: JobDir, payload: Payloads) -> None:
    rule = {"id": "safe", "deny_content": {"files": ["conf/*.py"], "pattern": "DEBUG"}, "reason": "no debug"}
    job.plan({"steps": ["a"], "rules": [rule]})
    (job.project / "conf").mkdir()
    fifo = job.project / "conf" / "prod.py"
    os.mkfifo(fifo)
    edit = payload("pre_tool_use_edit", tool_input={"file_path": str(fifo), "old_string": "x", "new_string": "y"})
    assert answered_in_time(fifo, lambda: inproc("PreToolUse", edit)).denied
