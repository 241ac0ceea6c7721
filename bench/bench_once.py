#!/usr/bin/env python3
"""Benchmark ``baton once`` and the checkpoint check at SessionStart, each beside a reference.

1. ``baton once KEY -- true`` for a KEY that already has a result (the lookup: snapshot, one index
   shard, one ledger line, then the replay) at each ledger size (default 1,000 and 1,000,000
   records), beside, in the same rounds: ``baton brief``; a naive lookup that scans the ledger for
   the key (what the index avoids); ``python3 -c pass``; and ``true``, the command without baton.
   Also ``baton once NEW -- true``: a real run (intent and result, both fsynced).
2. The SessionStart hook, started exactly as ``hooks/hooks.json`` says, for a job whose DONE step
   recorded 1,000 artifacts (all unchanged; then one missing), beside the same job whose step
   recorded none, and ``python3 -S -c pass``.

Every run's output is checked (a replay must say so, the brief must carry or omit CHANGED), so a
broken command cannot pass for a fast one. Standard library only; temp files are removed.

    python3 bench/bench_once.py [--sizes 1000,1000000] [--runs N] [--artifacts N] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hooks import hook_command  # noqa: E402
from bench_store import (  # noqa: E402
    BATON,
    BenchError,
    Figure,
    Run,
    check_samples,
    launch,
    machine,
    measured_env,
    ms,
    parse_sizes,
    plan_ids,
    progress,
    revision,
    write_ledger,
)

DEFAULT_SIZES = (1_000, 1_000_000)
QUICK_SIZES = (1_000, 100_000)
DEFAULT_RUNS, QUICK_RUNS = 9, 3
DEFAULT_ARTIFACTS = 1_000
KEYS = 20  # keys with a stored result in each project
SESSION = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab"
# the naive reference: the latest once record of a key, by reading the whole ledger
SCAN = ("import json, sys\nlatest = None\nfor line in open(sys.argv[1], 'rb'):\n"
        "    if sys.argv[2].encode() in line:\n        record = json.loads(line)\n"
        "        if record.get('key') == sys.argv[2]:\n            latest = record\n"
        "print(latest['exit'] if latest else 'none')\n")


def baton(*args: str) -> List[str]:
    return [sys.executable, str(BATON), *args]


def timed(argv: Sequence[str], cwd: Path, env: Dict[str, str], want_out: str = "", want_err: str = "",
          stdin: Optional[Path] = None) -> Run:
    run, out, err = launch(argv, cwd, env, stdin)
    if want_out not in out.decode("utf-8", "replace") or want_err not in err:
        raise BenchError(f"{' '.join(argv[-4:])}: unexpected output {out[:300]!r} {err[:300]!r}")
    return run


def lookup_size(size: int, runs: int, work: Path, env: Dict[str, str]) -> Dict[str, Figure]:
    project = work / f"n{size}"
    state = project / ".baton"
    state.mkdir(parents=True)
    ids = plan_ids()
    (state / "plan.json").write_text(json.dumps({"steps": ids}), encoding="utf-8")
    progress(f"{size:,} records: writing the ledger")
    check_samples(write_ledger(state / "steps.jsonl", size, ids), state / "steps.jsonl", size)
    launch(baton("brief"), project, env)  # the one-off rebuild of state.json
    progress(f"{size:,} records: {KEYS} keys run once each")
    for i in range(KEYS):
        launch(baton("once", f"key-{i}", "--", "true"), project, env)
    figures = {name: Figure() for name in ("once lookup", "once run", "brief", "ledger scan", "python3 -c pass",
                                           "true")}
    progress(f"{size:,} records: {runs} rounds")
    for i in range(runs):  # interleaved: a noisy moment is shared out
        figures["once lookup"].runs.append(timed(baton("once", f"key-{i % KEYS}", "--", "true"), project, env,
                                                 want_err="Not run again"))
        figures["once run"].runs.append(timed(baton("once", f"new-{i}", "--", "true"), project, env,
                                              want_err=f"baton: once new-{i} ran (record #"))
        figures["brief"].runs.append(timed(baton("brief"), project, env, want_out="NEXT: "))
        figures["ledger scan"].runs.append(timed([sys.executable, "-c", SCAN, str(state / "steps.jsonl"),
                                                  f"key-{i % KEYS}"], project, env, want_out="0"))
        figures["python3 -c pass"].runs.append(timed([sys.executable, "-c", "pass"], project, env))
        figures["true"].runs.append(timed([shutil.which("true") or "/bin/true"], project, env))
    shutil.rmtree(project)
    return figures


def artifact_project(work: Path, name: str, count: int, env: Dict[str, str], declared: bool) -> Path:
    """A job whose first step is recorded done after making ``count`` files under out/."""
    project = work / name
    (project / "out" / "a").mkdir(parents=True)
    for i in range(count):
        (project / "out" / "a" / f"part-{i:05d}.bin").write_bytes(os.urandom(512) + str(i).encode())
    steps: List[Any] = [{"id": "build", **({"artifacts": ["out"]} if declared else {})}, "check", "ship"]
    (project / "plan.json").write_text(json.dumps({"steps": steps}), encoding="utf-8")
    launch(baton("init", "--plan", "plan.json"), project, env)
    launch(baton("record", "build", "done", "built"), project, env)
    return project


def session_start(count: int, runs: int, work: Path, env: Dict[str, str]) -> Dict[str, Figure]:
    progress(f"SessionStart: a job with {count:,} recorded artifacts, and one with none")
    command, args, _ = hook_command("SessionStart", "")
    command = shutil.which(command, path=env.get("PATH")) or command  # as Claude Code finds python3 on PATH
    with_artifacts = artifact_project(work, "artifacts", count, env, True)
    without = artifact_project(work, "reference", count, env, False)
    payload = work / "session-start.json"
    figures = {name: Figure() for name in (f"{count:,} artifacts, unchanged", f"{count:,} artifacts, one missing",
                                           "no artifacts (reference)", "python3 -S -c pass")}
    names = list(figures)
    victim = with_artifacts / "out" / "a" / "part-00007.bin"
    kept = victim.read_bytes()
    for project in (with_artifacts, without):  # untimed: bytecode and the size-and-mtime cache warm
        hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
        payload.write_text(json.dumps({"session_id": SESSION, "transcript_path": str(work / "t.jsonl"),
                                       "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}))
        launch([command, *args], project, hook_env, payload)
    for _ in range(runs):
        for name, project in ((names[0], with_artifacts), (names[1], with_artifacts), (names[2], without)):
            hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
            payload.write_text(json.dumps({"session_id": SESSION, "transcript_path": str(work / "t.jsonl"),
                                           "cwd": str(project), "hook_event_name": "SessionStart",
                                           "source": "startup"}))
            if name == names[1]:
                victim.unlink()
            run, out, _ = launch([command, *args], project, hook_env, payload)
            if name == names[1]:
                victim.write_bytes(kept)
                os.utime(victim, ns=(int(_recorded_mtime(with_artifacts, victim)),) * 2)
            text = out.decode("utf-8", "replace")
            changed = "CHANGED: build: out/a/part-00007.bin is missing" in text
            if "NEXT: check" not in text or changed != (name == names[1]):
                raise BenchError(f"SessionStart ({name}): unexpected context {text[:400]!r}")
            figures[name].runs.append(run)
        figures[names[3]].runs.append(launch([command, "-S", "-c", "pass"], work, env)[0])
    return figures


def _recorded_mtime(project: Path, path: Path) -> int:
    record = json.loads((project / ".baton" / "steps.jsonl").read_text().splitlines()[0])
    rel = str(path.relative_to(project))
    return next(int(a["mtime_ns"]) for a in record["artifacts"] if a.get("path") == rel)


def render(title: str, figures: Dict[str, Figure], reference: str) -> List[str]:
    base = figures[reference].median
    lines = [title, f"  {'command':<34}{'median ms':>11}{'min':>9}{'max':>9}{'CPU ms':>9}{'vs ' + reference:>24}"]
    for name, figure in figures.items():
        cpu = sorted(r.cpu_seconds for r in figure.runs)[len(figure.runs) // 2]
        lines.append(f"  {name:<34}{ms(figure.median):>11}{ms(figure.low):>9}{ms(figure.high):>9}{ms(cpu):>9}"
                     f"{(figure.median - base) * 1000:>+23.1f} ")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=parse_sizes, help="ledger sizes (default 1000,1000000)")
    parser.add_argument("--runs", type=int, help=f"rounds per figure (default {DEFAULT_RUNS})")
    parser.add_argument("--artifacts", type=int, default=DEFAULT_ARTIFACTS, help="artifacts recorded (default 1000)")
    parser.add_argument("--quick", action="store_true", help="1,000 and 100,000 records, 3 rounds")
    parser.add_argument("--json", action="store_true", help="raw figures as JSON")
    args = parser.parse_args(argv)
    sizes: List[int] = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs: int = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS)
    work = Path(tempfile.mkdtemp(prefix="baton-bench-once-", dir="/tmp"))
    env = measured_env(work, BATON_FSYNC="1", HOME=str(work / "home"))
    results: List[Tuple[str, Dict[str, Figure]]] = []
    try:
        for size in sizes:
            results.append((f"baton once at {size:,} ledger records", lookup_size(size, runs, work, env)))
        results.append((f"SessionStart with {args.artifacts:,} recorded artifacts",
                        session_start(args.artifacts, runs, work, env)))
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"machine": machine(), "revision": revision(), "runs": runs,
                          "results": {t: {n: f.as_json() for n, f in figs.items()} for t, figs in results}}, indent=2))
        return 0
    m = machine()
    out = ["baton once and checkpoint benchmark", f"machine : {m['cpu']}, nproc {m['nproc']}, {m['system']}",
           f"python  : {m['python']}; baton {revision()}; fsync on; {runs} rounds, each command once a round",
           "note    : wall time of each process, fork to exit; medians; a shared VM is noisy", ""]
    for title, figures in results:
        reference = "python3 -c pass" if "python3 -c pass" in figures else "no artifacts (reference)"
        out += render(title, figures, reference) + [""]
    if len(results) > 2:
        small, large = results[0][1], results[-2][1]
        for name in ("once lookup", "ledger scan"):
            out.append(f"{name}: {large[name].median / small[name].median:.2f}x from the smallest to the largest "
                       "ledger")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
