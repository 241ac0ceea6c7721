"""A full disk (a small tmpfs, really full) and a read-only ``.baton/`` (a read-only mount): records
fail as a whole or not at all, readers and the gate decide from what they can read, and the hooks
tell the person and the model at the moment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List

import faultkit
import pytest

from store.ledger.ledger import parse_line

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

PLAN = {"steps": ["fetch", "train", {"id": "report", "writes": ["report/**"]}]}


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A project on a 256 KiB tmpfs, with a plan and one record; the disk is not full yet."""
    with faultkit.small_disk(tmp_path / "disk") as mount:
        project = mount / "project"
        (project / ".baton").mkdir(parents=True)
        (project / ".baton" / "plan.json").write_text(json.dumps(PLAN))
        yield project


def _ledger(project: Path) -> List[Dict[str, Any]]:
    return [parse_line(raw) for raw in (project / ".baton" / "steps.jsonl").read_bytes().splitlines()]


def _env(sandbox: Sandbox) -> Dict[str, str]:
    import os

    data = sandbox.home / "plugin-data"
    data.mkdir(exist_ok=True)
    return {**os.environ, "CLAUDE_PLUGIN_DATA": str(data)}


def test_on_a_full_disk_a_record_is_whole_or_absent_and_says_which(baton: Baton, disk: Path) -> None:
    assert baton("record", "fetch", "running", "downloading", cwd=disk).code == 0
    faultkit.fill(disk.parent)
    run = baton("record", "fetch", "done", "12,408 rows", cwd=disk)  # fits in the ledger's last page
    assert run.code == 0 and run.out.startswith("recorded fetch done (attempt 1, #2)"), run
    assert "warning: recorded, but the snapshot could not be saved (disk full: " in run.err
    assert [r["status"] for r in _ledger(disk)] == ["running", "done"]
    retry = baton("record", "fetch", "done", "12,408 rows", cwd=disk)
    assert retry.code == 0 and retry.out.startswith("already recorded fetch done"), retry
    for attempt in range(60):  # until the ledger's page is full too
        before = (disk / ".baton" / "steps.jsonl").read_bytes()
        run = baton("record", "train", "failed", f"epoch {attempt} diverged", cwd=disk)
        if run.code != 0:
            break
    else:
        pytest.fail("the disk never refused a record")
    assert run.code == 2 and run.out == ""
    assert run.err == (f"baton: cannot record: disk full: {disk / '.baton' / 'steps.jsonl'}; "
                       "nothing was recorded\n")
    assert (disk / ".baton" / "steps.jsonl").read_bytes() == before  # no partial line left behind
    assert baton("verify", cwd=disk).code == 0
    brief = baton("brief", cwd=disk)
    assert brief.code == 0 and "STORE: baton cannot write its state (disk full" in brief.out


def test_on_a_full_disk_a_torn_tail_is_repaired_without_writing_torn_log_first(baton: Baton, disk: Path) -> None:
    assert baton("record", "fetch", "running", cwd=disk).code == 0
    ledger = disk / ".baton" / "steps.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b'{"seq":2,"ts":"2026-')  # a writer killed mid-append
    faultkit.fill(disk.parent)
    run = baton("record", "fetch", "done", "ok", cwd=disk)
    assert run.code == 0 and run.out.startswith("recorded fetch done"), run
    assert "a torn line (20 bytes left by a killed writer, never acknowledged) was dropped without a copy" in run.err
    assert [r["seq"] for r in _ledger(disk)] == [1, 2]
    assert baton("verify", cwd=disk).out.startswith("ok: 2 records, chain intact")


def test_on_a_full_disk_the_hooks_say_so_and_the_stop_hook_still_decides(
        baton: Baton, disk: Path, sandbox: Sandbox) -> None:
    assert baton("record", "fetch", "done", "rows", cwd=disk).code == 0
    env = _env(sandbox)
    faultkit.fill(disk.parent)
    post = faultkit.hook("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                         "tool_response": {"stdout": ""}}, disk, env, matcher_tool="Bash")
    assert post is not None and "disk full" in post["systemMessage"]
    assert "not recorded" in post["systemMessage"]
    assert "baton cannot save its state (disk full" in faultkit.context(post)
    stop = faultkit.hook("Stop", {"stop_hook_active": False}, disk, env)
    assert stop is not None and _sent_back(stop).startswith("NEXT: train")
    assert "disk full" in stop["systemMessage"] and "disk full" in _sent_back(stop)
    again = faultkit.hook("Stop", {"stop_hook_active": True}, disk, env)  # nothing can be counted: one block
    assert again is not None and "hookSpecificOutput" not in again and "disk full" in again["systemMessage"]
    start = faultkit.hook("SessionStart", {"source": "startup"}, disk, env)
    assert start is not None and "disk full" in start["systemMessage"]
    assert "STORE: baton cannot write its state (disk full" in faultkit.context(start)
    assert "NEXT: train" in faultkit.context(start)
    (disk.parent / "filler").unlink()  # space again: the next brief says what was lost
    later = faultkit.context(faultkit.hook("SessionStart", {"source": "startup"}, disk, env))
    assert "DEGRADED: baton's PostToolUse hook failed" in later and "STORE: baton cannot write" not in later


@pytest.fixture
def frozen(tmp_path: Path, baton: Baton, sandbox: Sandbox) -> Iterator[Path]:
    """A project whose ``.baton/`` is read-only (a read-only mount as root, chmod otherwise)."""
    project = sandbox.project
    assert baton("init", "--plan", _plan_file(sandbox)).code == 0
    assert baton("record", "fetch", "done", "rows").code == 0
    with faultkit.read_only(project / ".baton"):
        yield project


def _plan_file(sandbox: Sandbox) -> str:
    path = sandbox.home / "plan.json"
    path.write_text(json.dumps(PLAN))
    return str(path)


def test_with_a_read_only_state_folder_readers_and_the_gate_work_and_writers_say_why_not(
        baton: Baton, frozen: Path, sandbox: Sandbox) -> None:
    state = frozen / ".baton"
    before = (state / "steps.jsonl").read_bytes()
    run = baton("record", "train", "running")
    assert run.code == 2 and run.out == "" and run.err.count("\n") == 1
    assert run.err.startswith("baton: cannot record: ") and "nothing was recorded" in run.err
    assert ("read-only file system: " if faultkit.can_mount() else "permission denied: ") + str(state) in run.err
    assert (state / "steps.jsonl").read_bytes() == before
    brief = baton("brief")
    assert brief.code == 0 and brief.out.splitlines()[2] == "NEXT: train"
    assert "STORE: baton cannot write its state (" in brief.out
    env = _env(sandbox)
    gate = faultkit.hook("PreToolUse", {"tool_name": "Write", "tool_input": {"file_path": str(state / "x"),
                                                                             "content": "x"}}, frozen, env,
                         matcher_tool="Write")
    assert gate is not None and gate["hookSpecificOutput"]["permissionDecision"] == "deny"
    post = faultkit.hook("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                         "tool_response": {"stdout": ""}}, frozen, env, matcher_tool="Bash")
    assert post is not None and "baton cannot write its state" in post["systemMessage"]
    stop = faultkit.hook("Stop", {"stop_hook_active": False}, frozen, env)
    assert stop is not None and "NEXT: train" in _sent_back(stop)
    start = faultkit.hook("SessionStart", {"source": "startup"}, frozen, env)
    assert start is not None and "NEXT: train" in faultkit.context(start) and "systemMessage" in start


def _sent_back(answer: Dict[str, Any]) -> str:
    """What a Stop answer sends the model back with ('' when it lets the session stop)."""
    specific = answer.get("hookSpecificOutput") or {}
    assert specific.get("hookEventName", "Stop") == "Stop" and "decision" not in answer, answer
    return str(specific.get("additionalContext") or "")
