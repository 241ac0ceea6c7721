"""A long ledger without a usable snapshot (a fresh clone, a half-written or killed save): the first
brief is right, comes from the ledger's end, and the snapshot is finished aside and replaced."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, List, Tuple

import ledgers
import pytest
from rebuild_wait import wait_for_rebuild

from store.state import journal, location, quickread, snapshot
from store.state.job import Job
from store.state.protocol import HEADER

REPO = Path(__file__).resolve().parents[2]
IDS = ["survey", "design", "build", "test", "ship", "docs", "release"]
FILLERS = 50_000  # about 15 MB: far past what a reader applies itself (journal.INLINE_BYTES)
EXPECTED = [f"PLAN: {', '.join(IDS)}", "DONE: survey, design, build, test", "NEXT: ship",
            "LAST: ship running started the fifth",
            "LEFT RUNNING: ship was started by session gen-sess at 2026-01-01T00:00:00Z and never recorded: it may be "
            "partly done; verify its effects before redoing it"]
BOOTSTRAP = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]["args"]


@pytest.fixture(scope="module")
def long_ledger(tmp_path_factory: pytest.TempPathFactory) -> Tuple[bytes, bytes]:
    """(the ledger, its full snapshot): early steps done once at the start, 200,000 retries of
    ``test``, then ``test`` done and ``ship`` running; ``docs`` and ``release`` never recorded."""
    folder = tmp_path_factory.mktemp("long")
    path = folder / "steps.jsonl"
    ledgers.write(path, ledgers.long_job(IDS, FILLERS))
    ledgers.check(path)
    assert path.stat().st_size > 10 * journal.INLINE_BYTES
    return path.read_bytes(), snapshot.rebuild(path).snapshot.to_bytes()


def _install(project: Path, ledger: bytes, state: bytes = b"") -> location.Layout:
    layout = location.Layout(project / ".baton", project)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"steps": IDS}))
    layout.ledger.write_bytes(ledger)
    if state:
        layout.snapshot.write_bytes(state)
    return layout


def _session_start(project: Path, home: Path) -> Tuple[subprocess.Popen[bytes], float]:
    """Start the SessionStart hook as hooks.json's launcher starts it (python3 -S -c <bootstrap> ROOT SessionStart)."""
    payload = {"session_id": "cold-1", "transcript_path": str(home / "t.jsonl"), "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO)}
    args = ["-S", "-c", *[a.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for a in BOOTSTRAP[2:]]]  # sh's python3
    stdin = home / "session-start.json"
    stdin.write_text(json.dumps(payload))
    with open(stdin, "rb") as handle:
        proc = subprocess.Popen([sys.executable, *args], stdin=handle, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=str(project), env=env)
    return proc, time.monotonic()


def _brief_of(proc: subprocess.Popen[bytes]) -> List[str]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == b"", err
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return str(context.split(f"{HEADER}\n", 1)[1]).splitlines()


def test_a_cold_session_start_answers_from_the_ledgers_end_and_the_snapshot_follows(
        sandbox: Any, long_ledger: Tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _install(sandbox.project, long_ledger[0])
    proc, _ = _session_start(sandbox.project, sandbox.home)
    assert _brief_of(proc) == EXPECTED
    assert wait_for_rebuild(layout.root) == long_ledger[1]
    # and through the fallback path, seen from inside: the quick read answered, not a rebuild
    layout.snapshot.unlink()
    calls: List[int] = []
    real = quickread.read

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(quickread, "read", spy)
    monkeypatch.setattr(snapshot, "rebuild", lambda *a: pytest.fail("the reader rebuilt the snapshot itself"))
    job = Job(layout, {"CLAUDE_CODE_SESSION_ID": "cold-2"}, save=True)
    assert calls == [1] and job.partial and job.unresolved == ()
    assert job.brief("cold-2").splitlines() == EXPECTED
    monkeypatch.undo()
    assert wait_for_rebuild(layout.root) == long_ledger[1]


def test_a_half_written_snapshot_is_detected_and_replaced(sandbox: Any, long_ledger: Tuple[bytes, bytes]) -> None:
    full = long_ledger[1]
    layout = _install(sandbox.project, long_ledger[0], full[: len(full) // 2])
    assert snapshot.Snapshot.from_bytes(layout.snapshot.read_bytes()) is None
    proc, _ = _session_start(sandbox.project, sandbox.home)
    assert _brief_of(proc) == EXPECTED
    assert wait_for_rebuild(layout.root) == full


def test_a_half_written_snapshot_of_a_short_ledger_is_replaced_at_once(sandbox: Any) -> None:
    layout = _install(sandbox.project, b"")
    for step in IDS[:3]:
        journal.append(layout, step, "done", f"{step} ok")
    full = layout.snapshot.read_bytes()
    for cut in (0, 1, len(full) // 3, len(full) - 1):
        layout.snapshot.write_bytes(full[:cut])
        assert Job(layout, {}).brief().splitlines()[1] == "DONE: survey, design, build"
        assert layout.snapshot.read_bytes() == full  # rebuilt and saved by the reader itself


@pytest.mark.parametrize("kill_after", [0.02, 0.1, 0.3])
def test_a_session_start_killed_midway_leaves_nothing_that_slows_or_misleads_the_next(
        sandbox: Any, long_ledger: Tuple[bytes, bytes], kill_after: float) -> None:
    layout = _install(sandbox.project, long_ledger[0])
    proc, _ = _session_start(sandbox.project, sandbox.home)
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    # the rebuild it may have started is killed too, at a random point of its work
    _kill_rebuilds(layout)
    assert not layout.snapshot.exists() or snapshot.read_saved(layout.snapshot, layout.ledger) is not None
    proc, started = _session_start(sandbox.project, sandbox.home)
    assert _brief_of(proc) == EXPECTED
    assert wait_for_rebuild(layout.root) == long_ledger[1]
    leftovers = [p.name for p in layout.root.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]
    for name in leftovers:  # a temp file of a killed save is never read
        assert name.startswith((".state.json.", ".replay.json."))


def _kill_rebuilds(layout: location.Layout) -> None:
    """SIGKILL every process holding the job's rebuild lock (the detached rebuild)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
            holds = any(os.readlink(fd) == str(layout.rebuild_lock) for fd in fds)
        except OSError:
            continue
        if holds:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
    time.sleep(0.05)


def test_when_the_budget_runs_out_the_brief_says_what_it_does_not_know(
        sandbox: Any, long_ledger: Tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _install(sandbox.project, long_ledger[0])
    monkeypatch.setattr(journal, "QUICK_SECONDS", 0.0)
    lines = Job(layout, {}, save=False).brief().splitlines()
    assert lines[2] == "NEXT: survey" and lines[3:5] == EXPECTED[3:5]
    store = [line for line in lines if line.startswith("STORE: baton has not finished reading")]
    assert len(store) == 1 and "5 step(s) (build, design, docs, ...)" in store[0]
    wait_for_rebuild(layout.root)
    monkeypatch.undo()
    assert Job(layout, {}).brief().splitlines() == EXPECTED



def test_the_gate_allows_only_reading_while_next_is_not_known(
        sandbox: Any, long_ledger: Tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    from hooks import adapter

    layout = _install(sandbox.project, long_ledger[0])
    monkeypatch.setattr(journal, "QUICK_SECONDS", 0.0)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(sandbox.project))

    def gate(tool: str, tool_input: Any, event: str = "PreToolUse") -> Any:
        payload = {"session_id": "g", "cwd": str(sandbox.project), "hook_event_name": event, "tool_name": tool,
                   "tool_input": tool_input, "tool_use_id": f"toolu_{tool}",
                   **({"tool_response": {"stdout": "", "stderr": ""}} if event == "PostToolUse" else {})}
        return adapter.run(event, json.dumps(payload).encode())

    denied = gate("Write", {"file_path": str(sandbox.project / "notes.md"), "content": "x"})
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert "has not finished reading this job's long ledger" in reason and reason.endswith("[baton:reading]")
    reading = gate("Bash", {"command": "ls -la"})  # passes: as it is, or rewritten to run in the sandbox
    assert reading is None or reading["hookSpecificOutput"]["permissionDecision"] != "deny", reading
    wait_for_rebuild(layout.root)
    monkeypatch.undo()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(sandbox.project))
    ran = (reading or {}).get("hookSpecificOutput", {}).get("updatedInput", {}).get("command", "ls -la")
    gate("Bash", {"command": ran}, "PostToolUse")  # the Bash call is over before the next call, as in Claude Code
    assert gate("Write", {"file_path": str(sandbox.project / "notes.md"), "content": "x"}) is None
