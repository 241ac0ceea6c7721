#!/usr/bin/env python3
"""Benchmark ``baton verify`` of a long ledger beside a reference revision, in the same run.

It writes one chained ledger (default 1,000,000 records, ~313 MB, the ledger ``bench_store.py``
writes) and times, as child processes, rounds of:

* ``verify``: this tree's ``baton verify`` (pieces checked at once in forked workers);
* ``verify, one process``: this tree's check with forking turned off (``chain.FORK = False``, the
  path a platform without fork takes), started with ``python3 -c`` beside the CLI;
* ``verify at REV``: ``baton verify`` of the reference revision (default ``main``), taken from git
  with ``git archive`` into the temp tree (or ``--baseline DIR``, a checkout of your own);
* ``sha256 of the file``: ``python3 -c`` hashing the ledger whole, the floor for a check of every byte.

The rows run interleaved, in a rotating order, so each meets the same noise; wall time is from fork
to reap, CPU time is the child's user + system time including the workers it waited for. The load
average is printed before and after each round: compare rows of one run, not runs of a busy machine.
Each run's output must say ``ok: N records``. Standard library only; Linux; the temp tree is removed.

    python3 bench/bench_verify.py [--records N] [--runs N] [--baseline-rev REV | --baseline DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.dont_write_bytecode = True  # leave no __pycache__ in the work tree (bench_store does the same)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import (  # noqa: E402
    BATON,
    REPO,
    BenchError,
    Figure,
    check_samples,
    launch,
    machine,
    measured_env,
    plan_ids,
    progress,
    revision,
    write_ledger,
)

SERIAL = ("import sys; sys.path.insert(0, sys.argv[1]); from store.ledger import chain; chain.FORK = False; "
          "v = chain.verify(sys.argv[2]); print(f'ok: {v.records} records' if not v.problem else v.problem)")
HASH_FILE = ("import hashlib, sys; h = hashlib.sha256(); f = open(sys.argv[1], 'rb'); "
             "[h.update(b) for b in iter(lambda: f.read(1 << 20), b'')]; print(h.hexdigest())")


def baseline_tree(rev: str, work: Path) -> Path:
    """``store/`` and ``bin/`` of ``rev``, extracted from git into ``work`` (no worktree registered)."""
    target = work / f"baseline-{rev.replace('/', '_')}"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "store", "bin"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise BenchError(f"git archive {rev}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def rows(project: Path, ledger: Path, base: Path, rev: str) -> List[Tuple[str, List[str], Optional[str]]]:
    python = sys.executable
    return [(f"verify at {rev}", [python, str(base / "bin" / "baton"), "verify"], "ok: "),
            ("verify", [python, str(BATON), "verify"], "ok: "),
            ("verify, one process", [python, "-c", SERIAL, str(REPO), str(ledger)], "ok: "),
            ("sha256 of the file", [python, "-c", HASH_FILE, str(ledger)], None)]


def measure(records: int, runs: int, work: Path, base: Path, rev: str) -> Dict[str, Any]:
    project = work / "project"
    state = project / ".baton"
    state.mkdir(parents=True)
    ledger = state / "steps.jsonl"
    ids = plan_ids()
    progress(f"writing {records:,} records")
    check_samples(write_ledger(ledger, records, ids), ledger, records)
    (state / "plan.json").write_text(json.dumps({"steps": ids}))
    env = measured_env(work)
    commands = rows(project, ledger, base, rev)
    figures: Dict[str, Figure] = {name: Figure() for name, _, _ in commands}
    loads: List[Tuple[float, float]] = []
    for _name, argv, _ in commands:  # untimed: fills the bytecode cache and the page cache
        launch(argv, project, env)
    for i in range(runs):
        progress(f"round {i + 1} of {runs}")
        before = os.getloadavg()[0]
        order = commands[i % len(commands):] + commands[:i % len(commands)]
        for name, argv, check in order:
            run, out, _ = launch(argv, project, env)
            if check is not None and f"{check}{records} records".encode() not in out:
                raise BenchError(f"{name}: {out[:300]!r}")
            figures[name].runs.append(run)
        loads.append((before, os.getloadavg()[0]))
    return {"records": records, "ledger_bytes": ledger.stat().st_size, "figures": figures, "loads": loads}


def table(meta: Dict[str, Any], result: Dict[str, Any]) -> str:
    figures: Dict[str, Figure] = result["figures"]
    loads = result["loads"]
    lines = [f"# baton verify, {result['records']:,} records ({result['ledger_bytes'] / 1e6:,.0f} MB)", "",
             f"- revision: {meta['revision']}; reference: {meta['reference']}",
             "- machine: {cpu}, {nproc} CPUs, Python {python}".format(**meta["machine"]),
             f"- runs: {len(next(iter(figures.values())).runs)} per row, interleaved, rotating order",
             "- load average (1 min) before/after each round: "
             + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in loads), "",
             "| row | median wall s | fastest s | slowest s | median CPU s |", "|---|---|---|---|---|"]
    for name, figure in figures.items():
        lines.append(f"| {name} | {figure.median:.2f} | {figure.low:.2f} | {figure.high:.2f} | {figure.cpu:.2f} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline-rev", default="main", help="the revision to compare with (default: main)")
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with instead of --baseline-rev")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.records < 1 or args.runs < 1:
        parser.error("--records and --runs must be positive")
    work = Path(tempfile.mkdtemp(prefix="baton-bench-verify-"))
    try:
        if args.baseline:
            base, rev = args.baseline.resolve(), str(args.baseline)
        else:
            base, rev = baseline_tree(args.baseline_rev, work), args.baseline_rev
        reference = f"{rev} ({revision(base) if args.baseline else revision_of(args.baseline_rev)})"
        meta = {"revision": revision(), "reference": reference, "machine": machine()}
        result = measure(args.records, args.runs, work, base, rev)
    except BenchError as exc:
        print(f"bench_verify: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({**meta, "records": result["records"], "ledger_bytes": result["ledger_bytes"],
                          "loads": result["loads"],
                          "figures": {k: v.as_json() for k, v in result["figures"].items()}}, indent=2))
    else:
        print(table(meta, result))
    return 0


def revision_of(rev: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
