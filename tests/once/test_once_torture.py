"""100 runs of ``baton once`` SIGKILLed (with their command) at random moments, four at a time,
over a small pool of keys so that runs of one key overlap, follow kills, and replay.

Afterwards, per key: the command ran at most once (it appends to ``runs.txt`` before anything
else); every result a run acknowledged (it exited with the command's code and said so) is in the
ledger with that code and id; a key whose run died between intent and result reports unknown
(exit 3) without running; a key with a result replays it without running; and the ledger verifies.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional

from store.state import journal, once_keys
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

RUNS = 100
AT_ONCE = 4
KEYS = 24
CODES = (0, 1, 4)  # the command's exit code for a key (never 2 or 3, baton's own)
# appends its key first (one write), then works a while, prints its id, exits with the key's code; how long
# it works comes from the environment, so every run of a key is the same command (a key is bound to its command)
COMMAND = 'echo "$BATON_ONCE_KEY $$" >> runs.txt; sleep "${WORK_SECONDS:-0}"; echo "id-$$"; exit "$1"'


class Run(NamedTuple):
    key: str
    code: Optional[int]  # None: killed
    out: str
    err: str


def code_of(key: str) -> int:
    return CODES[int(key[1:]) % len(CODES)]


def start(plugin: Path, project: Path, key: str, rng: random.Random) -> subprocess.Popen[str]:
    argv = [sys.executable, str(plugin / "bin" / "baton"), "once", key, "--id-from", r"id-(\d+)", "--",
            "sh", "-c", COMMAND, "sh", str(code_of(key))]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "WORK_SECONDS": f"{rng.uniform(0, 0.25):.3f}"}
    return subprocess.Popen(argv, cwd=str(project), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def batch(plugin: Path, project: Path, rng: random.Random, window: float,
          keys: Optional[List[str]] = None) -> List[Run]:
    """``AT_ONCE`` runs started together, each SIGKILLed at a random moment within ``window`` seconds."""
    keys = keys or [f"k{rng.randrange(KEYS)}" for _ in range(AT_ONCE)]
    procs = [start(plugin, project, key, rng) for key in keys]
    kill_at = [time.monotonic() + rng.uniform(0.02, window) for _ in procs]
    while any(p.poll() is None for p in procs):
        now = time.monotonic()
        for proc, when in zip(procs, kill_at):
            if proc.poll() is None and now >= when:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # baton and the command it runs
                except ProcessLookupError:
                    pass
        time.sleep(0.005)
    found = []
    for key, proc in zip(keys, procs):
        out, err = proc.communicate()
        found.append(Run(key, None if proc.returncode < 0 else proc.returncode, out, err))
    return found


def runs_per_key(project: Path) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    path = project / "runs.txt"
    for line in path.read_text().splitlines() if path.exists() else []:
        counts[line.split()[0]] = counts.get(line.split()[0], 0) + 1
    return counts


def test_sigkill_at_random_moments_never_runs_a_side_effect_twice(baton: Baton, sandbox: Sandbox,
                                                                  plugin_copy: Path) -> None:
    project = sandbox.project
    assert baton("init", "deliver").code == 0
    rng = random.Random(int(os.environ.get("BATON_TORTURE_SEED", "7")))
    started = time.monotonic()  # a batch nobody kills says how long a run takes on this machine now
    batch(plugin_copy, project, rng, 1e9, [f"w{100 + i}" for i in range(AT_ONCE)])
    window = (time.monotonic() - started) * 1.3
    done: List[Run] = []
    while len(done) < RUNS:
        done += batch(plugin_copy, project, rng, window)
    killed = [r for r in done if r.code is None]
    # a result is acknowledged once baton said so (a kill after that line does not take it back)
    acknowledged = [r for r in done if re.search(rf" ran (\(record #\d+\)|at .*\)): exit {code_of(r.key)}\b", r.err)]
    assert len(killed) >= RUNS // 4 and len(acknowledged) >= RUNS // 10, (len(killed), len(acknowledged), window)

    counts = runs_per_key(project)
    assert max(counts.values()) == 1, counts  # at most once, whatever was killed when

    layout = Layout(project / ".baton", project)
    snap = journal.read_state(layout).snapshot
    latest = {key: once_keys.lookup(layout, snap, key) for key in [f"k{i}" for i in range(KEYS)] + list(counts)}
    for run in acknowledged:
        record = latest[run.key]
        assert record is not None and record["status"] == "result", run
        assert record["exit"] == code_of(run.key) and f"id {record['id']}" in run.err, (run, record)

    unknown = [k for k, r in latest.items() if r is not None and r["status"] == "intent"]
    assert [k for k in counts if latest[k] is None] == []  # a command never ran before its intent was on disk
    for key, record in latest.items():
        before = runs_per_key(project).get(key, 0)
        again = baton("once", key, "--", "sh", "-c", COMMAND, "sh", str(code_of(key)))
        if record is None:
            assert again.code == code_of(key) and runs_per_key(project)[key] == 1  # never started: runs now
        elif record["status"] == "intent":
            assert again.code == 3 and "outcome unknown" in again.err, (key, again)
            assert runs_per_key(project).get(key, 0) == before
        else:
            assert again.code == record["exit"] and "Not run again" in again.err
            assert runs_per_key(project)[key] == before == 1
    assert unknown, "no run was killed between its intent and its result; the test proved less than it says"
    verified = baton("verify")
    assert verified.code == 0, verified.err
    print(f"TORTURE: {len(done)} runs, {len(killed)} killed, {len(acknowledged)} acknowledged results, "
          f"{len(unknown)} keys left unknown, {sum(counts.values())} commands run, "
          f"{json.dumps(sorted(counts.items())[:3])}...")
