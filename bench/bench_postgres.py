#!/usr/bin/env python3
"""Benchmark the hooks with the job kept in PostgreSQL, side by side with the file store.

Two copies of one job: a parallel plan of 40 steps, ``--records`` ledger records, and worker W
holding step ``s09`` (rich ``writes``). One copy keeps its records in ``.baton/steps.jsonl``; the
other in a local PostgreSQL server (a throwaway cluster started here, or ``--url``), with the
same records pushed there by ``baton store push``. Each hook runs as ``hooks/hooks.json`` starts it
(``python3 -S -c <bootstrap> <root> <Event>``, the interpreter given by ``--python``, default this
one, which must be able to import psycopg), with Claude Code's payload on stdin:

* PreToolUse Write inside the step's ``writes`` (no output), PostToolUse Write (counted);
* Stop in a new session of worker W (sent back, naming its step); SessionStart (resume: the brief);
* with PostgreSQL, the hot-path hooks (PreToolUse, PostToolUse, Stop) three times: with the
  clone's copy of the state younger than ``mirror.FRESH_SECONDS`` (what most calls find), older
  (the call answers from it and starts a detached refresh), and older than
  ``mirror.STALE_SECONDS`` (the call asks the server itself, as after a long pause).

Every run's output is checked. Beside them: ``python3 -S -c pass`` and the import of psycopg
alone (through baton's driver), the cost the PostgreSQL store cannot avoid when it asks the
server. The report gives medians, the ratio to the file store, and the cost per tool call
averaged over a working session with a tool call every 5 seconds. Linux; needs
PostgreSQL's server programs unless ``--url`` is given; the temp tree is removed at the end.

    .cache/venv/bin/python bench/bench_postgres.py [--runs N] [--records N] [--url URL] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import REPO, BenchError, launch, machine, progress, revision

sys.path.insert(0, str(REPO / "tests"))  # the tests' throwaway cluster

from store.state import journal, mirror
from store.state.location import Layout

WORKER = "bench-worker-w"
HELD = "s09"
CALL_EVERY = 5.0  # seconds between tool calls, for the averaged column


def plan() -> Dict[str, Any]:
    steps: List[Dict[str, Any]] = []
    for i in range(1, 41):
        step: Dict[str, Any] = {"id": f"s{i:02d}", "title": f"part {i} of the port",
                                "needs": [] if i <= 10 else [f"s{i - 10:02d}", f"s{i - 9:02d}"]}
        step["writes"] = [f"src/part{i}/**", f"tests/test_part{i}*.py", "docs/ports.md"]
        step["bash"] = ["pytest*", "ruff check*"]
        steps.append(step)
    return {"job": "bench-parallel", "limits": {"stop_blocks": 100000, "lease_minutes": 600}, "steps": steps}


def build(root: Path, records: int, env: Dict[str, str]) -> Layout:
    """A file job with ``records`` records: eight steps done, many claims, W holding HELD."""
    layout = Layout(root / ".baton", root)
    layout.root.mkdir(parents=True)
    (root / "src" / f"part{HELD[1:].lstrip('0')}").mkdir(parents=True)
    layout.plan.write_text(json.dumps(plan(), indent=2))
    saved = dict(os.environ)
    os.environ.update(env, BATON_FSYNC="0")
    try:
        for i in range(1, 9):
            journal.append(layout, f"s{i:02d}", "claim", f"claimed by worker w{i}", worker=f"w{i}")
            journal.append(layout, f"s{i:02d}", "done", "ported and tested")
        seq = journal.read_state(layout).snapshot.seq
        while seq < records - 1:  # each note differs: the same note again would be a retry and add nothing
            seq = journal.append(layout, "s10", "running", f"a long step's progress note, {seq} of many")["seq"]
        journal.append(layout, HELD, "claim", f"claimed by worker {WORKER}", worker=WORKER)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return layout


def hook_argv(python: str, event: str) -> List[str]:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    entry = data["hooks"][event][0]["hooks"][0]
    # hooks.json: /bin/sh -c LAUNCH <bootstrap> ROOT EVENT, which runs python3 -S -c <bootstrap> ROOT EVENT
    return [python, "-S", "-c", *[a.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for a in entry["args"][2:]]]


def payload(root: Path, event: str, session: str) -> Dict[str, Any]:
    base: Dict[str, Any] = {"session_id": session, "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
                            "hook_event_name": event}
    target = {"file_path": str(root / "src" / "part9" / "port.py"), "content": "x = 1\n"}
    if event == "PreToolUse":
        return {**base, "permission_mode": "default", "tool_name": "Write", "tool_input": target}
    if event == "PostToolUse":
        return {**base, "permission_mode": "default", "tool_name": "Write", "tool_input": target,
                "tool_response": {"type": "create", "filePath": target["file_path"]}}
    if event == "Stop":
        return {**base, "stop_hook_active": False, "last_assistant_message": "done?", "background_tasks": []}
    return {**base, "source": "resume"}


def check(event: str, out: bytes) -> None:
    text = out.decode("utf-8", "replace")
    want = {"PreToolUse": text == "", "PostToolUse": "deny" not in text,
            "Stop": '"hookEventName": "Stop", "additionalContext"' in text and f"NEXT: {HELD}" in text,
            "SessionStart": f"NEXT: {HELD}" in text and "DEGRADED:" not in text}[event]
    if not want:
        raise BenchError(f"{event}: unexpected output {text[-600:]!r}")


AGES = {"fresh": 0.0, "background": mirror.FRESH_SECONDS + 30, "old": mirror.STALE_SECONDS + 60}


def set_copy_age(layout: Layout, age: str) -> None:
    path = layout.root / "shared.json"
    data = json.loads(path.read_text())
    data["fetched"] = time.time() - AGES[age]
    path.write_text(json.dumps(data))


def settle(layout: Layout) -> None:
    """Wait (untimed) for a background refresh a run started, so it does not load the next run."""
    deadline = time.monotonic() + 30
    time.sleep(0.05)
    while mirror.refresh_running(layout) and time.monotonic() < deadline:
        time.sleep(0.05)


def run_hook(python: str, event: str, layout: Layout, env: Dict[str, str], work: Path) -> float:
    stdin = work / f"payload-{uuid.uuid4().hex}.json"
    session = str(uuid.uuid4()) if event == "Stop" else "5f0c2a9e-3b1d-4e7a-9c44-2d8e6b1f0a37"
    stdin.write_text(json.dumps(payload(layout.project, event, session)))
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(layout.project), "CLAUDE_PLUGIN_ROOT": str(REPO),
                "CLAUDE_CODE_SESSION_ID": session}
    run, out, err = launch(hook_argv(python, event), layout.project, hook_env, stdin)
    stdin.unlink()
    if err.strip():
        raise BenchError(f"{event}: stderr {err[:300]!r}")
    if (layout.root / "errors.log").exists():
        raise BenchError(f"{event}: {(layout.root / 'errors.log').read_text()[:300]}")
    check(event, out)
    return run.seconds


Case = Tuple[str, str, str, Optional[str]]  # label, event, store, age of the clone's copy (None: as it is)
CASES: List[Case] = [
    *[(label, event, store, age) for label, event in (("PreToolUse Write", "PreToolUse"),
                                                      ("PostToolUse Write", "PostToolUse"), ("Stop", "Stop"))
      for store, age in (("file", None), ("pg", "fresh"), ("pg", "background"), ("pg", "old"))],
    ("SessionStart", "SessionStart", "file", None),
    ("SessionStart", "SessionStart", "pg", None),
]


def measure(python: str, runs: int, layouts: Dict[str, Layout], envs: Dict[str, Dict[str, str]],
            work: Path) -> Dict[str, List[float]]:
    times: Dict[str, List[float]] = {}
    baselines: List[Tuple[str, List[str]]] = [
        ("python3 -S -c pass", [python, "-S", "-c", "pass"]),
        ("import psycopg (driver)", [python, "-S", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r}); "
                                     "from store.backend import driver; driver.psycopg()"]),
    ]
    for round_no in range(runs + 1):  # round 0 warms up (bytecode cache, the server's caches)
        progress(f"round {round_no}/{runs}")
        for label, argv in baselines:
            seconds = launch(argv, work, envs["file"])[0].seconds
            if round_no:
                times.setdefault(label, []).append(seconds)
        for label, event, store, age in CASES:
            if age is not None:
                set_copy_age(layouts[store], age)
            seconds = run_hook(python, event, layouts[store], envs[store], work)
            if store == "pg":
                settle(layouts[store])
            if round_no:
                times.setdefault(key(label, store, age), []).append(seconds)
    return times


def key(label: str, store: str, age: Optional[str]) -> str:
    return f"{label}|{store}|{age or ''}"


def report(times: Dict[str, List[float]], meta: Dict[str, Any]) -> str:
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    spread = {k: (min(v) * 1000, max(v) * 1000) for k, v in times.items()}
    calls = max(1, int(mirror.FRESH_SECONDS // CALL_EVERY))  # one call per window starts a refresh
    lines = [f"bench_postgres: {meta['records']:,} records, {meta['runs']} runs, {meta['cpu']} x{meta['nproc']}, "
             f"Python {meta['python']}, PostgreSQL at {meta['server']}, revision {meta['revision']}", "",
             "| hook | file store | PostgreSQL: copy fresh | copy older than "
             f"{mirror.FRESH_SECONDS:g} s (refreshed in the background) | copy older than {mirror.STALE_SECONDS:g} s "
             "(the hook asks the server) | averaged over a working session |", "| --- | --- | --- | --- | --- | --- |"]

    def cell(value: float, base: float) -> str:
        return f"{value:.1f} ms ({value / base:.2f}x)"

    for label in dict.fromkeys(c[0] for c in CASES):
        base = med[key(label, "file", None)]
        if label == "SessionStart":
            pg = med[key(label, "pg", None)]
            once = f"{cell(pg, base)} (once per session)"
            lines.append(f"| {label} | {base:.1f} ms | - | - | {cell(pg, base)} | {once} |")
            continue
        fresh, background, old = (med[key(label, "pg", age)] for age in ("fresh", "background", "old"))
        average = ((calls - 1) * fresh + background) / calls
        lines.append(f"| {label} | {base:.1f} ms | {cell(fresh, base)} | {cell(background, base)} | "
                     f"{cell(old, base)} | {cell(average, base)} |")
    lines += ["", *(f"{k}: median {med[k]:.1f} ms (min {spread[k][0]:.1f}, max {spread[k][1]:.1f})"
                    for k in ("python3 -S -c pass", "import psycopg (driver)"))]
    lines.append(f"averaged: a tool call every {CALL_EVERY:g} s, so one call in {calls} finds the copy older than "
                 f"{mirror.FRESH_SECONDS:g} s and starts a refresh; a hook asks the server itself only after "
                 f"{mirror.STALE_SECONDS:g} s without one")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--url", default="", help="an existing server's database (default: a throwaway cluster)")
    parser.add_argument("--python", default=sys.executable, help="the hooks' interpreter (must import psycopg)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="baton-bench-pg-"))
    cluster = None
    try:
        url = args.url
        if not url:
            from pgcluster import start_cluster

            progress("starting a throwaway PostgreSQL cluster")
            cluster = start_cluster()
            url = cluster.socket_url(cluster.createdb().rsplit("/", 1)[1])
        base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "BATON_", "PYTHONDONTWRITE"))}
        base.update(BATON_WORKER=WORKER, PYTHONPYCACHEPREFIX=str(work / "pycache"))
        envs = {"file": base, "pg": {**base, "BATON_DATABASE_URL": url}}
        progress(f"building two jobs of {args.records:,} records")
        layouts = {"file": build(work / "file", args.records, base), "pg": build(work / "pg", args.records, base)}
        (layouts["pg"].root / "steps.jsonl").rename(work / "pushed.jsonl")
        os.symlink(work / "pushed.jsonl", layouts["pg"].root / "steps.jsonl")
        for step in (["store", "push", url], ["brief"]):
            launch([args.python, str(REPO / "bin" / "baton"), *step], layouts["pg"].project, envs["pg"])
        (layouts["pg"].root / "steps.jsonl").unlink()
        (layouts["pg"].root / "state.json").unlink()
        times = measure(args.python, args.runs, layouts, envs, work)
        meta = {**machine(), "revision": revision(), "records": args.records, "runs": args.runs,
                "server": "a local socket" if not args.url else "--url"}
        print(json.dumps({"meta": meta, "seconds": times}, indent=2) if args.json else report(times, meta))
    except BenchError as exc:
        print(f"bench_postgres: {exc}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.remove()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
