"""Runs on record in ``.baton/run/``: the lock bwrap holds while a sandbox lives tells a running
command from a finished one, and the short window before bwrap takes it counts as running."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from store.sandbox import probe, runs


def test_a_run_is_running_while_its_sandbox_lives(tmp_path: Path) -> None:
    state = str(tmp_path / ".baton")
    os.makedirs(state)
    files = runs.start(state, runs.run_id("toolu_1"), {"command": "sleep 1"})
    assert (tmp_path / ".baton" / "run" / ".gitignore").read_text() == "*\n"
    Path(files["started"]).touch()
    os.utime(files["started"], (time.time() - 10, time.time() - 10))  # its shell started long ago, no lock yet
    assert [r["command"] for r in runs.records(state)] == ["sleep 1"] and runs.running(state) == []
    bwrap = probe.find_bwrap()
    assert bwrap
    proc = subprocess.Popen([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user",
                             "--cap-drop", "ALL", "--lock-file", files["lock"], "--", "sleep", "2"])
    try:
        deadline = time.monotonic() + 5
        while not runs.lock_held(files["lock"]):
            assert time.monotonic() < deadline, "bwrap never took the lock"
            time.sleep(0.02)
        assert [r["id"] for r in runs.running(state)] == ["toolu_1"]
    finally:
        proc.wait()
    assert runs.running(state) == []


def test_a_run_whose_shell_started_counts_as_running_until_bwrap_locks(tmp_path: Path) -> None:
    state = str(tmp_path / ".baton")
    os.makedirs(state)
    files = runs.start(state, "call", {"command": "x"})
    Path(files["started"]).touch()
    assert runs.running(state)
    os.utime(files["started"], (time.time() - 10, time.time() - 10))
    assert not runs.running(state)
    runs.finish(state, "call")
    assert runs.records(state) == [] and not any(os.path.exists(p) for p in files.values())


def _age(state: str, rid: str, seconds: float, key: str = "at") -> None:
    record = runs.load(state, rid)
    assert record is not None
    runs.save(state, rid, {**record, key: time.time() - seconds})


def test_a_run_counts_as_running_from_the_moment_it_is_allowed_until_its_shell_starts(tmp_path: Path) -> None:
    """PreToolUse's record alone (no shell yet: an approval pending, or a background command's shell not
    at the script yet) is a run: a Write judged then must not pass. Bounded, since a refused call leaves
    its record too; a background run's PostToolUse (``posted``) starts the bound again."""
    state = str(tmp_path / ".baton")
    os.makedirs(state)
    files = runs.start(state, "toolu_bg", {"command": "npm run dev", "background": True})
    assert not os.path.exists(files["started"]) and not runs.lock_held(files["lock"])
    live = runs.running(state)
    assert [r["id"] for r in live] == ["toolu_bg"] and live[0]["pending"]
    _age(state, "toolu_bg", runs.PENDING_SECONDS - 5)
    assert runs.running(state), "still within its bound"
    _age(state, "toolu_bg", runs.PENDING_SECONDS + 1)
    assert runs.running(state) == [], "past its bound (a refused call): writes go on"
    runs.save(state, "toolu_bg", {**(runs.load(state, "toolu_bg") or {}), "posted": time.time() - 1})
    assert [r["id"] for r in runs.running(state)] == ["toolu_bg"], "its PostToolUse came: its shell starts soon"
    Path(files["started"]).touch()
    assert runs.running(state) and not runs.running(state)[0]["pending"]
    os.utime(files["started"], (time.time() - 10, time.time() - 10))
    assert runs.running(state) == [], "started long ago and its lock is free: it ended"


def test_a_run_claude_code_asks_about_counts_only_once_its_posttooluse_came(tmp_path: Path) -> None:
    """An ``ask``: the person may refuse it, and no hook says so; a refused call must not hold writes. Once
    allowed, a background command's PostToolUse marks it, and it counts until its shell has started."""
    state = str(tmp_path / ".baton")
    os.makedirs(state)
    runs.start(state, "toolu_ask", {"command": "make dev", "background": True, "asked": True})
    assert runs.running(state) == [], "waiting for the person, or refused"
    _age(state, "toolu_ask", 0, "posted")
    assert [r["id"] for r in runs.running(state)] == ["toolu_ask"]


def test_run_ids_are_safe_file_names() -> None:
    assert runs.run_id("toolu_01AbC") == "toolu_01AbC"
    assert runs.run_id("../../x y") == "______x_y"
    assert runs.run_id(None).startswith("call_") and runs.run_id("") != runs.run_id("")
