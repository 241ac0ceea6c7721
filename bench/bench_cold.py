#!/usr/bin/env python3
"""Benchmark what a long ledger costs when nothing is cached, and what checking it costs.

For each ledger size (default 1,000 / 100,000 / 1,000,000 records, the same chained ledger as
``bench_store.py`` writes) it times, as child processes started as a user or Claude Code starts
them, with the bytecode cache on:

* ``cold brief``: ``baton brief`` with no ``state.json`` (a fresh clone), over the 40-step plan
  whose steps all appear in the ledger;
* ``cold brief, 10 steps never recorded``: the same with 10 more plan steps the ledger never
  names, so the quick read must search the whole file (its worst case);
* ``cold brief, parallel plan``: the first plan with ``"needs": []`` on every step (a parallel
  plan, whose claims depend on every claim since the job began), read by a worker; issue 25 item
  10 asks for it to be as fast as the sequential row above;
* ``cold SessionStart``: the SessionStart hook exactly as ``hooks/hooks.json`` starts it, with that
  plan and no snapshot; its output must hold the brief;
* ``cold SessionStart, parallel plan``: the same hook for a worker of the parallel plan, which
  claims a step there (the ledger is cut back to its size after each run);
* ``rebuild aside``: the detached process that then rebuilds ``state.json`` (off the critical path);
* ``verify``: ``baton verify`` of the whole ledger;
* ``log``: ``baton log -n N`` of the whole ledger (N = the size), output to a file;

beside the references in the same run: the seed's naive store (``bench/seed_store.py brief``, which
reads the whole ledger every time), the SHA-256 of the ledger file alone, a minimal Python hook
(``python3 -S -c`` that parses stdin's JSON and prints ``{}``) and ``python3 -c pass``. While a
cold figure is measured the benchmark holds the job's ``rebuild.lock``, so no rebuild starts and
every run is as cold as the first. Standard library only; Linux; the temp tree is removed at the end.

``--held`` measures instead the case the quick read cannot answer exactly (issue 25 item 10): a
parallel plan whose first step is held since the job began, so its claims need the whole ledger.
With no snapshot and the ``rebuild.lock`` held (the hooks alone read on), it times the first
SessionStart hook, then PreToolUse hooks (a Write) one after the other until one is no longer
refused with ``[baton:reading]``, then a SessionStart that knows NEXT; it counts the hook calls
until NEXT was known (the last call may answer from an exact quick read of the rest, from where
the replay got to, rather than replay it: then ``state.json`` is left to the rebuild aside), and
puts beside them ``baton brief`` on the same ledger (a full replay: what every hook did before it
read a part per call) and the minimal Python hook.

    python3 bench/bench_cold.py [--sizes 1000,100000,1000000] [--runs N] [--quick] [--json] [--held]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.dont_write_bytecode = True  # leave no __pycache__ in the work tree (bench_store does the same)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import (
    BATON,
    REPO,
    SEED,
    BenchError,
    Figure,
    check_samples,
    launch,
    machine,
    mb,
    measured_env,
    ms,
    parse_sizes,
    plan_ids,
    progress,
    revision,
    write_ledger,
)

DEFAULT_SIZES = (1_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 100_000)
DEFAULT_RUNS = 5
QUICK_RUNS = 3
NEVER = [f"n{i:02d}-never-recorded" for i in range(10)]
MINIMAL_HOOK = "import json, sys; json.load(sys.stdin); print('{}')"
SHA_FILE = "import hashlib, sys; hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest()"
TARGETS = {"cold brief": 1.5, "cold brief, 10 steps never recorded": 1.5, "cold brief, parallel plan": 1.5,
           "cold SessionStart": 2.0, "cold SessionStart, parallel plan": 2.0, "verify": 2.0}
ROWS = ("cold brief", "cold brief, 10 steps never recorded", "cold brief, parallel plan",
        "cold SessionStart", "cold SessionStart, parallel plan", "rebuild aside", "verify", "log",
        "seed brief (reads it all)", "sha256 of the file", "minimal Python hook", "python3 -c pass")


@dataclass
class SizeResult:
    records: int
    ledger_bytes: int = 0
    figures: Dict[str, Figure] = field(default_factory=dict)

    def as_json(self) -> Dict[str, Any]:
        return {"records": self.records, "ledger_bytes": self.ledger_bytes,
                "figures": {k: v.as_json() for k, v in self.figures.items()}}


class HeldLock:
    """Hold a job's ``rebuild.lock`` so that no reader starts a rebuild while cold reads are timed."""

    def __init__(self, state: Path) -> None:
        self.path, self.fd = state / "rebuild.lock", -1

    def __enter__(self) -> None:
        self.fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def session_start(project: Path, work: Path) -> Tuple[List[str], Path]:
    """The SessionStart hook's argv from hooks.json, and a payload file for its stdin."""
    entry = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]
    args = [str(a).replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for a in entry["args"]]
    payload = work / f"session-start-{project.name}.json"
    payload.write_text(json.dumps({"session_id": "bench-cold", "transcript_path": "", "cwd": str(project),
                                   "hook_event_name": "SessionStart", "source": "startup"}))
    return [shutil.which(str(entry["command"])) or sys.executable, *args], payload


def timed(figure: Figure, argv: Sequence[str], cwd: Path, env: Dict[str, str], stdin: Optional[Path] = None,
          check: Optional[str] = None) -> None:
    run, out, _ = launch(argv, cwd, env, stdin)
    if check is not None and check.encode() not in out:
        raise BenchError(f"{' '.join(argv[1:3])}: the output does not hold {check!r}: {out[:300]!r}")
    figure.runs.append(run)


def warm_up(work: Path, env: Dict[str, str]) -> None:
    """One untimed pass of every command on a small ledger, so bytecode compilation is not timed."""
    result = measure(100, 1, work, env, quiet=True)
    del result


def measure(size: int, runs: int, work: Path, env: Dict[str, str], quiet: bool = False) -> SizeResult:
    ids = plan_ids()
    result = SizeResult(size)
    project = work / (f"warm-{size}" if quiet else f"n{size}")
    state = project / ".baton"
    state.mkdir(parents=True)
    if not quiet:
        progress(f"{size:,} records: writing the ledger")
    samples = write_ledger(state / "steps.jsonl", size, ids)
    check_samples(samples, state / "steps.jsonl", size)
    result.ledger_bytes = (state / "steps.jsonl").stat().st_size
    plan_all = json.dumps({"steps": ids})
    plan_never = json.dumps({"steps": ids + NEVER})
    plan_parallel = json.dumps({"steps": [{"id": i, "needs": []} for i in ids]})
    hook_argv, payload = session_start(project, work)
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO)}
    figures = {name: Figure() for name in ROWS}
    bare_env = {**env, "PYTHONNOUSERSITE": "1"}
    for i in range(runs):
        if not quiet:
            progress(f"{size:,} records: round {i + 1} of {runs}")
        with HeldLock(state):
            for plan, row in ((plan_all, "cold brief"), (plan_never, "cold brief, 10 steps never recorded")):
                (state / "plan.json").write_text(plan)
                (state / "state.json").unlink(missing_ok=True)
                timed(figures[row], [sys.executable, str(BATON), "brief"], project, env, check="NEXT: ")
            (state / "plan.json").write_text(plan_parallel)
            (state / "state.json").unlink(missing_ok=True)
            timed(figures["cold brief, parallel plan"], [sys.executable, str(BATON), "brief"], project,
                  {**env, "BATON_WORKER": "bench-worker"}, check="NEXT: ")
            (state / "plan.json").write_text(plan_never)
            (state / "state.json").unlink(missing_ok=True)
            timed(figures["cold SessionStart"], hook_argv, project, hook_env, payload, check="NEXT: ")
            _parallel_session_start(state, plan_parallel, figures["cold SessionStart, parallel plan"],
                                    hook_argv, project, hook_env, payload)
        start = time.perf_counter()
        timed(figures["rebuild aside"], [sys.executable, "-S", "-c",
                                         "import sys; sys.path.insert(0, sys.argv[1]); "
                                         "from store.state.background import main; main(sys.argv[2])",
                                         str(REPO), str(state)], project, env)
        if not (state / "state.json").exists():
            raise BenchError(f"the rebuild saved no snapshot ({time.perf_counter() - start:.1f} s)")
        timed(figures["verify"], [sys.executable, str(BATON), "verify"], project, env, check=f"ok: {size} records")
        timed(figures["log"], [sys.executable, str(BATON), "log", "-n", str(size)], project, env, check=f"#{size} ")
        timed(figures["seed brief (reads it all)"], [sys.executable, str(SEED), "brief"], project, env,
              check="NEXT: ")
        timed(figures["sha256 of the file"], [sys.executable, "-c", SHA_FILE, str(state / "steps.jsonl")], project,
              env)
        python3 = shutil.which("python3") or sys.executable  # hooks.json starts /bin/sh, which execs python3
        timed(figures["minimal Python hook"], [python3, "-S", "-c", MINIMAL_HOOK], project, bare_env, payload,
              check="{}")
        timed(figures["python3 -c pass"], [sys.executable, "-c", "pass"], project, env)
    result.figures = figures
    shutil.rmtree(project)
    return result


def _parallel_session_start(state: Path, plan: str, figure: Figure, argv: List[str], project: Path,
                            env: Dict[str, str], payload: Path) -> None:
    """The SessionStart hook of a worker in a parallel plan with no snapshot: it claims a step (one
    record appended), so the ledger is put back as it was for the next figure."""
    ledger = state / "steps.jsonl"
    size = ledger.stat().st_size
    (state / "plan.json").write_text(plan)
    (state / "state.json").unlink(missing_ok=True)
    try:
        timed(figure, argv, project, {**env, "BATON_WORKER": "bench-worker"}, payload, check="NEXT: ")
    finally:
        os.truncate(ledger, size)  # the claim goes: every run claims in the same ledger
        (state / "state.json").unlink(missing_ok=True)


HELD_ROWS = ("first SessionStart", "PreToolUse while reading", "SessionStart once whole",
             "cold brief, full replay (the reference)", "minimal Python hook")
HELD_CALLS = 400  # a bound: each call reads on, so far fewer are needed


def held_ledger(path: Path, size: int) -> None:
    """``size`` records of a parallel job: worker w1 claims ``held`` first and never lets go, other
    workers claim and retry ``b`` and ``c``, and ``b`` is done at the end."""
    from store.ledger.ledger import GENESIS, format_line, seal

    prev = GENESIS
    with open(path, "wb", buffering=1 << 20) as out:
        for seq in range(1, size + 1):
            if seq == 1:
                fields: Dict[str, Any] = {"step": "held", "status": "claim", "worker": "w1"}
            elif seq == size:
                fields = {"step": "b", "status": "done", "note": "b finished"}
            elif seq % 4 == 0:
                fields = {"step": "bc"[seq % 8 // 4], "status": "claim", "worker": f"w{2 + seq % 3}"}
            else:
                fields = {"step": "bc"[seq % 2], "status": "running" if seq % 3 else "failed",
                          "note": f"retry {seq}: the tests are still red"}
            record = seal({"ts": "2026-01-01T00:00:00Z", "session": f"s{seq % 5}", **fields}, seq, prev)
            prev = record["hash"]
            out.write(format_line(record))


def measure_held(size: int, work: Path, env: Dict[str, str]) -> Dict[str, Any]:
    """The held-since-start case at ``size`` records (see the module docstring)."""
    project = work / f"held-{size}"
    state = project / ".baton"
    state.mkdir(parents=True)
    progress(f"{size:,} records, held since the start: writing the ledger")
    held_ledger(state / "steps.jsonl", size)
    (state / "plan.json").write_text(json.dumps({"steps": [{"id": i, "needs": []} for i in ("held", "b")]}))
    hook_argv, start_payload = session_start(project, work)
    pre_argv = [a.replace("SessionStart", "PreToolUse") for a in hook_argv]
    pre_payload = work / f"pre-{size}.json"
    pre_payload.write_text(json.dumps({"session_id": "bench-cold", "transcript_path": "", "cwd": str(project),
                                       "hook_event_name": "PreToolUse", "tool_name": "Write",
                                       "tool_input": {"file_path": str(project / "x.txt"), "content": "x"}}))
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_ROOT": str(REPO), "BATON_WORKER": "w9"}
    figures = {name: Figure() for name in HELD_ROWS}
    python3 = shutil.which("python3") or sys.executable
    for _ in range(3):
        timed(figures["minimal Python hook"], [python3, "-S", "-c", MINIMAL_HOOK], project,
              {**env, "PYTHONNOUSERSITE": "1"}, start_payload, check="{}")
    calls, load = 1, os.getloadavg()
    with HeldLock(state):
        run, out, _ = launch(hook_argv, project, hook_env, start_payload)
        figures["first SessionStart"].runs.append(run)
        reading = b"NEXT: not known yet (reading the ledger: " in out
        if not reading and b"NEXT: " not in out:
            raise BenchError(f"the first SessionStart gave no brief: {out[:300]!r}")
        while reading and calls < HELD_CALLS:
            run, out, _ = launch(pre_argv, project, hook_env, pre_payload)
            calls += 1
            figures["PreToolUse while reading"].runs.append(run)
            reading = b"[baton:reading]" in out
        if reading:
            raise BenchError(f"still reading after {HELD_CALLS} hook calls")
        saved = (state / "state.json").exists()  # no: the last call answered from an exact quick read
        timed(figures["SessionStart once whole"], hook_argv, project, hook_env, start_payload, check="NEXT: held")
        ledger = state / "steps.jsonl"
        for _ in range(3):
            (state / "state.json").unlink(missing_ok=True)
            (state / "replay.json").unlink(missing_ok=True)  # else the brief goes on from where the hooks got
            timed(figures["cold brief, full replay (the reference)"], [sys.executable, str(BATON), "brief"], project,
                  {**env, "BATON_WORKER": "w9"}, check="NEXT: ")
    size_bytes = ledger.stat().st_size
    shutil.rmtree(project)
    return {"records": size, "ledger_bytes": size_bytes, "hook_calls_until_whole": calls, "state_saved": saved,
            "load_average_before": load, "load_average_after": os.getloadavg(),
            "figures": {k: v.as_json() for k, v in figures.items() if v.runs}, "_figures": figures}


def held_table(meta: Dict[str, Any], results: Sequence[Dict[str, Any]]) -> str:
    m = meta["machine"]
    lines = ["baton cold start, a parallel step held since the job began (hooks alone, no rebuild aside);",
             "PreToolUse while reading: every PreToolUse call until the first that was not refused, that one included",
             f"machine : {m['cpu']}, nproc {m['nproc']}, {m['system']}", f"baton   : {meta['revision']}", ""]
    for r in results:
        before, after = (" ".join(f"{x:.2f}" for x in r[k]) for k in ("load_average_before", "load_average_after"))
        how = "state.json saved" if r["state_saved"] else "the rest read exactly from the end"
        lines.append(f"{r['records']:,} records ({r['ledger_bytes'] / 1e6:,.1f} MB): {r['hook_calls_until_whole']} "
                     f"hook calls until NEXT was known ({how}; load average {before} before, {after} after)")
        for name in HELD_ROWS:
            f = r["_figures"][name]
            if not f.runs:
                continue
            lines.append(f"  {name:<42} median {ms(f.median):>9} ms  min {ms(f.low):>9}  max {ms(f.high):>9}  "
                         f"cpu {ms(f.cpu):>9}  runs {len(f.runs)}")
    return "\n".join(lines)


def table(meta: Dict[str, Any], results: Sequence[SizeResult]) -> str:
    m = meta["machine"]
    lines = ["baton cold-start and full-read benchmark",
             f"machine : {m['cpu']}, nproc {m['nproc']}, {m['system']}",
             f"python  : {m['python']} ({m['executable']}), bytecode cache on",
             f"baton   : {meta['revision']}",
             f"runs    : {meta['runs']} per figure, medians; wall time of each child process, fork to exit",
             "note    : timings on a shared VM are noisy: compare rows of one run with each other", ""]
    header = ("records", "ledger MB", "what", "median ms", "min ms", "max ms", "cpu ms", "peak RSS MB", "target")
    rows: List[Tuple[str, ...]] = [header]
    for r in results:
        for n, name in enumerate(ROWS):
            f = r.figures[name]
            target = TARGETS.get(name)
            verdict = "" if target is None else (f"ok (< {target:g} s)" if f.median < target else f"OVER {target:g} s")
            rows.append((f"{r.records:,}" if n == 0 else "", f"{r.ledger_bytes / 1e6:,.1f}" if n == 0 else "", name,
                         ms(f.median), ms(f.low), ms(f.high), ms(f.cpu), mb(f.rss_kb), verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if i in (0, 2, 8) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=parse_sizes, help="ledger sizes, comma separated (default 1000,100000,1000000)")
    parser.add_argument("--runs", type=int, help=f"runs per figure (default {DEFAULT_RUNS}; --quick: {QUICK_RUNS})")
    parser.add_argument("--quick", action="store_true", help="1,000 and 100,000 records, fewer runs")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--held", action="store_true", help="only the parallel step held since the job began")
    args = parser.parse_args(argv)
    sizes: List[int] = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs: int = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS)
    work = Path(tempfile.mkdtemp(prefix="baton-bench-cold-", dir="/tmp"))
    env = measured_env(work, CLAUDE_CODE_SESSION_ID="bench-cold")
    meta = {"machine": machine(), "revision": revision(), "runs": runs, "sizes": sizes}
    if args.held:
        return _main_held(meta, sizes, work, env, args.json)
    try:
        warm_up(work, env)
        results = [measure(size, runs, work, env) for size in sizes]
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    data = {**meta, "results": [r.as_json() for r in results]}
    print(json.dumps(data, indent=2) if args.json else table(meta, results))
    return 0


def _main_held(meta: Dict[str, Any], sizes: Sequence[int], work: Path, env: Dict[str, str], as_json: bool) -> int:
    try:
        warm_up(work, env)
        results = [measure_held(size, work, env) for size in sizes]
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if as_json:
        print(json.dumps({**meta, "results": [{k: v for k, v in r.items() if k != "_figures"} for r in results]},
                         indent=2))
    else:
        print(held_table(meta, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
