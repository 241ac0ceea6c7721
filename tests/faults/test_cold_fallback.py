"""A fresh clone of a long parallel job whose first step is held since the job began: the quick
read cannot be exact, so each hook replays within its budget and saves how far it got. Hooks
SIGKILLed mid-replay lose at most their own run's progress, and the state the hooks end with is
exactly the full replay's; meanwhile each hook answers: SessionStart with NEXT not known yet,
PreToolUse refusing with [baton:reading], Stop letting the session go and recording nothing."""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

import ledgers
import pytest

from store.state import coldclaims, location, once_keys, resume, snapshot

REPO = Path(__file__).resolve().parents[2]
HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
STEPS = ["held", "b", "c", "d"]
RECORDS = 100_000  # about 18 MB: several runs cut mid-replay; more than two cold-scan chunks (coldclaims.CHUNK)
BUDGET = "0.05"  # BATON_TEST_READ_SECONDS: a hook replays a few hundred KB, its quick read one chunk


@pytest.fixture(scope="module")
def ledger_bytes() -> bytes:
    data = b"".join(ledgers.held_since_start(RECORDS))
    assert len(data) > 2 * coldclaims.CHUNK
    return data


def _install(project: Path, data: bytes) -> location.Layout:
    layout = location.Layout(project / ".baton", project)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"steps": [{"id": s, "needs": []} for s in STEPS]}))
    layout.ledger.write_bytes(data)
    return layout


def _hook(event: str, project: Path, home: Path, payload: Dict[str, Any]) -> subprocess.Popen[bytes]:
    """Start the hook as hooks.json's launcher starts it (python3 -S -c <bootstrap> ROOT EVENT)."""
    args = HOOKS[event][0]["hooks"][0]["args"]
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO),
           "BATON_WORKER": "w9", resume.ENV: BUDGET, "BATON_FSYNC": "0"}
    stdin = home / f"{event}.json"
    stdin.write_text(json.dumps({"session_id": "fallback-1", "transcript_path": str(home / "t.jsonl"),
                                 "cwd": str(project), "hook_event_name": event, **payload}))
    with open(stdin, "rb") as handle:
        return subprocess.Popen([sys.executable, "-S", "-c", *[a.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
                                                              for a in args[2:]]],
                                stdin=handle, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(project),
                                env=env)


def _answer(proc: subprocess.Popen[bytes]) -> Dict[str, Any]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == b"", err
    return json.loads(out) if out.strip() else {}


def _session_start(project: Path, home: Path) -> subprocess.Popen[bytes]:
    return _hook("SessionStart", project, home, {"source": "startup"})


def _context(answer: Dict[str, Any]) -> str:
    return str(answer["hookSpecificOutput"]["additionalContext"])


def _saved_offset(layout: location.Layout) -> int:
    progress = resume.read(layout)
    return progress.snapshot.offset if progress is not None else 0


class NoRebuild:
    """Hold the job's ``rebuild.lock``: no detached rebuild starts, so only the hooks read on."""

    def __init__(self, layout: location.Layout) -> None:
        self.fd = os.open(str(layout.rebuild_lock), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def close(self) -> None:
        os.close(self.fd)


def _full_state(data: bytes, elsewhere: Path) -> bytes:
    """What ``state.json`` holds after a full replay of ``data`` (saved as a reader saves it)."""
    other = location.Layout(elsewhere / ".baton", elsewhere)
    other.root.mkdir(parents=True)
    other.ledger.write_bytes(data)
    snap = snapshot.rebuild(other.ledger).snapshot
    once_keys.flush(other, snap)
    return snap.to_bytes()


def test_killed_hooks_lose_only_their_own_run_and_the_state_ends_exact(
        sandbox: Any, ledger_bytes: bytes, tmp_path: Path) -> None:
    layout = _install(sandbox.project, ledger_bytes)
    held = NoRebuild(layout)
    rng = random.Random(25)
    try:
        kills, answered, before = 0, 0, 0
        context: Optional[str] = None
        for run in range(200):
            proc = _session_start(sandbox.project, sandbox.home)
            if kills < 4 and run % 2 and not layout.snapshot.exists():  # SIGKILL at a random point of its run
                time.sleep(rng.uniform(0.05, 0.5))
                proc.send_signal(signal.SIGKILL)
                proc.communicate(timeout=60)
                if layout.snapshot.exists():  # this run read to the end and saved the whole state before the kill came
                    continue
                kills += 1  # a run killed mid-replay
                after = _saved_offset(layout)
                assert after >= before  # what earlier runs saved is still there, never cut back
                before = after
                continue
            context = _context(_answer(proc))
            answered += 1
            after = _saved_offset(layout)
            if "NEXT: not known yet (reading the ledger: " not in context:
                break
            assert after > before  # each run that answers reads on and keeps it
            before = after
        # w1's lease ran out long ago: this worker took the step over, as after a full replay
        assert context is not None and "\nNEXT: held\n" in context
        assert kills >= 2 and answered > 2, (kills, answered)
    finally:
        held.close()
    # the finishing hook saved the whole state, then claimed a step for this worker (appended, saved)
    data = layout.ledger.read_bytes()
    assert data.startswith(ledger_bytes) and data.count(b"\n") == RECORDS + 1 and b'"worker":"w9"' in data
    assert layout.snapshot.read_bytes() == _full_state(data, tmp_path / "full")
    assert not os.path.exists(layout.file(resume.REPLAY))


def test_while_reading_pre_tool_use_refuses_and_stop_records_nothing(sandbox: Any, ledger_bytes: bytes) -> None:
    layout = _install(sandbox.project, ledger_bytes)
    held = NoRebuild(layout)
    try:
        context = _context(_answer(_session_start(sandbox.project, sandbox.home)))
        assert "NEXT: not known yet (reading the ledger: " in context
        answer = _answer(_hook("PreToolUse", sandbox.project, sandbox.home,
                               {"tool_name": "Write", "tool_input": {"file_path": str(sandbox.project / "x.txt"),
                                                                      "content": "x"}}))
        reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert reason.endswith("[baton:reading]") and "\n" not in reason and " MB" in reason
        assert _answer(_hook("Stop", sandbox.project, sandbox.home, {"stop_hook_active": False})) == {}
        assert layout.ledger.read_bytes() == ledger_bytes  # no stop record, no claim
        assert not os.path.exists(layout.file("counters.json"))
    finally:
        held.close()
