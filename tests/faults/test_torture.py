"""The store under load and kills: writers SIGKILLed at random moments lose no acknowledged record and
duplicate none; writers, readers and hooks together never show a brief that is not exactly the
brief of some prefix of the ledger. Sized to run in about half a minute each; the figures are in
the README's guarantees."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Set

import faultkit

from store.ledger import chain
from store.ledger.ledger import parse_line
from store.plan.plan import load_plan
from store.state import journal, location, snapshot
from store.state.brief import render
from store.state.snapshot import Snapshot

if TYPE_CHECKING:
    from conftest import Sandbox

REPO = Path(__file__).resolve().parents[2]
STEPS = [f"s{i}" for i in range(6)]
WRITER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from store.state import journal, location
name, count = sys.argv[2], int(sys.argv[3])
# paced: a file holding how many briefs the readers printed; wait for one per `pace` records appended
paced, pace = (sys.argv[4], int(sys.argv[5])) if len(sys.argv) > 5 else (None, 0)
layout = location.resolve()
if paced:
    import time
    deadline = time.monotonic() + 120  # readers that stopped must not hold the writers for ever
for i in range(count):
    if paced:
        while int(open(paced).read() or 0) < i // pace and time.monotonic() < deadline:
            time.sleep(0.005)
    step = "s%d" % (i % 6)
    journal.append(layout, step, ("running", "done", "failed")[i % 3], "%s-%d" % (name, i))
    os.write(1, ("%s-%d\\n" % (name, i)).encode())  # acknowledged: the append returned
"""
ROUNDS = 40
WRITERS = 4
PER_WRITER = 600
KILLED_AFTER = 150  # records a writer appends in a round of kills: enough to be still at work when its kill comes
PACE = 12  # records a paced writer appends per brief the readers have printed, however slow the machine


def _notes(ledger: Path) -> List[str]:
    data = ledger.read_bytes() if ledger.exists() else b""
    complete = data[: data.rfind(b"\n") + 1]
    return [parse_line(raw)["note"] for raw in complete.splitlines()]


def test_writers_killed_at_random_lose_no_acknowledged_record_and_duplicate_none(
        sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(json.dumps({"steps": STEPS}))
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    rng = random.Random(16)
    acked: Set[str] = set()
    started = killed = torn = 0
    for round_no in range(ROUNDS):
        procs = []
        for w in range(WRITERS):
            argv = [sys.executable, str(script), str(REPO), f"r{round_no}w{w}", str(KILLED_AFTER)]
            procs.append(subprocess.Popen(argv, cwd=sandbox.project, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        started += len(procs)
        doomed = [proc for proc in procs if rng.random() < 0.75]
        # killed mid-work, however fast the machine: once each has acknowledged a record, at a random moment
        first = {proc: proc.stdout.readline() for proc in doomed if proc.stdout is not None}
        time.sleep(rng.uniform(0.0, 0.1))
        for proc in doomed:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode in (0, -signal.SIGKILL), err
            acked |= set((first.get(proc, b"") + out).decode().split())
        ledger = sandbox.state / "steps.jsonl"
        verdict = chain.verify(ledger)
        assert verdict.problem == "", verdict  # at worst a torn tail, never a broken chain
        torn += verdict.torn > 0
        notes = _notes(ledger)
        assert len(notes) == len(set(notes)), "a record was written twice"
        assert acked <= set(notes), f"lost acknowledged records: {sorted(acked - set(notes))[:5]}"
    layout = location.resolve()
    journal.append(layout, "s0", "done", "after the storm")  # repairs any torn tail
    assert chain.verify(layout.ledger).problem == "" and chain.verify(layout.ledger).torn == 0
    saved = Snapshot.from_bytes(layout.snapshot.read_bytes())
    assert saved == snapshot.rebuild(layout.ledger).snapshot
    assert killed > ROUNDS and len(acked) > ROUNDS * WRITERS  # the kills and the work both happened
    print(f"{ROUNDS} rounds, {started} writer processes, {killed} killed, {torn} torn tails, {len(acked)} "
          f"acknowledged records, {len(_notes(layout.ledger)) - 1} in the ledger: none lost, none twice")


def _every_brief(layout: location.Layout, session: str) -> Set[str]:
    """The brief of every prefix of the ledger, as a reader with ``session`` would print it."""
    plan = load_plan(layout.plan)
    snap, end, briefs = Snapshot(), 0, {render(plan, Snapshot(), session)}
    for raw in layout.ledger.read_bytes().splitlines(keepends=True):
        end += len(raw)
        snap.apply(parse_line(raw[:-1]), end)
        briefs.add(render(plan, snap, session))
    return briefs


def test_writers_readers_and_hooks_together_never_show_a_wrong_brief(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(json.dumps({"steps": STEPS}))
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": "reader-session"}
    reads = tmp_path / "reads"
    reads.write_text("0")
    writers = [subprocess.Popen([sys.executable, str(script), str(REPO), f"w{w}", str(PER_WRITER), str(reads),
                                 str(PACE)], cwd=sandbox.project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for w in range(WRITERS)]
    briefs: List[str] = []
    hook_calls: List[int] = []
    failures: List[str] = []

    count_lock = threading.Lock()

    def read() -> None:
        while any(p.poll() is None for p in writers):
            done = subprocess.run([sys.executable, str(REPO / "bin" / "baton"), "brief"], cwd=sandbox.project,
                                  env=env, capture_output=True, check=False)
            if done.returncode != 0 or done.stderr:
                failures.append(done.stderr.decode())
            briefs.append(done.stdout.decode().rstrip("\n"))
            with count_lock:
                (tmp_path / "reads.new").write_text(str(len(briefs)))
                os.replace(tmp_path / "reads.new", reads)

    def hooks() -> None:
        while any(p.poll() is None for p in writers):
            post = faultkit.hook("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                                 "tool_response": {"stdout": ""}}, sandbox.project,
                                 matcher_tool="Bash")
            gate = faultkit.hook("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
                                 sandbox.project, matcher_tool="Bash")
            denied = gate is not None and gate["hookSpecificOutput"]["permissionDecision"] == "deny"
            if denied or (post is not None and "systemMessage" in post):  # `ls` passes, as is or sandboxed
                failures.append(f"{gate} {post}")
            hook_calls.append(1)

    threads = [threading.Thread(target=read) for _ in range(4)] + [threading.Thread(target=hooks) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for writer in writers:
        assert writer.wait(timeout=60) == 0, writer.stderr.read() if writer.stderr else ""
    assert not failures, failures[:2]
    layout = location.resolve()
    possible = _every_brief(layout, "reader-session")
    wrong = [b for b in briefs if b not in possible]
    assert not wrong, wrong[:2]
    assert len(briefs) >= 40 and len(set(briefs)) > 10  # readers really saw the ledger move
    counters: Dict[str, int] = json.loads(layout.counters.read_bytes())
    assert counters["total_calls"] == len(hook_calls)
    assert chain.verify(layout.ledger).records == WRITERS * PER_WRITER
    print(f"{WRITERS} writers x {PER_WRITER} records, {len(briefs)} briefs read meanwhile ({len(set(briefs))} "
          f"distinct), {2 * len(hook_calls)} hook calls: every brief exactly right")
