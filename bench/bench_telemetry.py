#!/usr/bin/env python3
"""Benchmark what OpenTelemetry export costs the hooks, and that a bad collector costs them nothing.

The hooks that may start an export (Stop, SessionEnd, and a PostToolUse that raises an alert) run
as whole processes, started exactly as ``hooks/hooks.json`` says and read the way Claude Code
reads them (stdin written, stdout and stderr read to their end, the process reaped), against four
collectors, interleaved run by run so a noisy moment hits all four:

* **off**: ``BATON_TELEMETRY`` unset (the default; the reference);
* **healthy**: a collector on loopback that answers at once;
* **down**: nothing listening on the endpoint's port;
* **slow**: a collector that accepts connections and never answers.

With telemetry on, a hook only starts a detached sender and returns; the target is that a collector
that is down or slow changes no hook's median by more than 2 ms compared with a healthy one.
Before each run the detached processes of the previous one are waited for (a sender gives up after
the export timeout, set to 1 s here), so every run pays for starting one, the most a hook pays. Each run's answer is
checked. Two job sizes: a small one (40 steps, one session) and a large one (1,000 steps, 200
sessions), whose figures file the Stop hook reads and writes. Standard library only; Linux.

    python3 bench/bench_telemetry.py [--runs N] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_hooks import hook_command, resolve_interpreter, transcript_text  # noqa: E402
from bench_store import REPO, BenchError, machine, progress, revision  # noqa: E402
from jobs import write_job  # noqa: E402

from store.monitor import exporting, figures, launch  # noqa: E402
from store.state import journal  # noqa: E402
from store.state.job import Job  # noqa: E402
from store.state.location import Layout  # noqa: E402

TARGET_MS = 2.0
COLLECTORS = ("off", "healthy", "down", "slow")
SESSION = "7c1e0b52-9d3a-4f6e-8b27-1a5c9e3d0f48"
DROP = ("BATON_", "OTEL_", "CLAUDE", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


class Healthy:
    """A collector that takes every request at once."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                body = b'{"partialSuccess":{}}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Slow:
    """A collector that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.held: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def small_job(root: Path) -> Path:
    project = root / "small"
    state = project / ".baton"
    state.mkdir(parents=True)
    steps = [f"s{i:02d}" for i in range(40)]
    (state / "plan.json").write_text(json.dumps({"job": "bench-small", "steps": steps}))
    layout = Layout(state, project)
    for sid in steps[:20]:
        journal.append(layout, sid, "done", "finished", session=SESSION)
    return project


def large_job(root: Path) -> Path:
    project = root / "large"
    write_job(project, 1000, 200)
    plan = json.loads((project / ".baton" / "plan.json").read_text())
    plan["steps"].append({"id": "one-more", "phase": "implemented"})  # so Stop has a NEXT to send the agent to
    (project / ".baton" / "plan.json").write_text(json.dumps(plan))
    return project


def prepare(project: Path) -> Dict[str, Any]:
    """Fold the figures once (as the hooks would have), write this session's transcript."""
    layout = Layout(project / ".baton", project)
    transcript = project / "transcripts" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(exist_ok=True)
    transcript.write_text(transcript_text(SESSION))
    figures.refresh(layout, Job(layout, {}).plan)
    counters = json.loads(layout.counters.read_text()) if layout.counters.exists() else {}
    return {"layout": layout, "transcript": transcript, "counters": counters}


def payload(project: Path, event: str, transcript: Path) -> bytes:
    data: Dict[str, Any] = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
                            "hook_event_name": event}
    if event == "Stop":
        data.update(prompt_id="p", permission_mode="default", stop_hook_active=False, background_tasks=[])
    elif event == "SessionEnd":
        data.update(prompt_id="p", reason="other")
    else:
        data.update(prompt_id="p", permission_mode="default", tool_name="Bash", tool_use_id="toolu_bench",
                    tool_input={"command": "ls src", "description": "list"},
                    tool_response={"stdout": "a\nb", "stderr": "", "interrupted": False})
    return json.dumps(data).encode()


def reset(layout: Layout, event: str, counters: Dict[str, Any]) -> None:
    """The state before each run: for PostToolUse, one call short of the calls-without-record alert."""
    state = dict(counters)
    state.pop("stops", None)  # every Stop run is its session's first: it sends the model back, as most Stops do
    state.pop("raised", None)
    if event == "PostToolUse":
        job = Job(layout, {})
        state.update(seq=job.snap.seq, step=job.next.id if job.next else "", calls_since_record=24,
                     failures_since_record=0, changed=[], changed_count=0)
    layout.counters.write_text(json.dumps(state))


TAG = f"BATON_BENCH_TAG={uuid.uuid4().hex}".encode()  # in every hook's environment, so in its workers'


def detached_pids(layout: Layout) -> List[int]:
    """Live processes carrying this run's tag (Linux: read from /proc): a hook's detached worker,
    forked from the hook, outlives it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if TAG in (entry / "environ").read_bytes().split(b"\0") and b"Z" not in (
                        entry / "stat").read_bytes().split(b")")[-1][:3]:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_for_detached(layout: Layout, limit: float = 15.0) -> None:
    """Wait until the detached processes of the last run (a sender, the work after SessionEnd) have
    exited, so that no run shares the machine with them."""
    deadline = time.monotonic() + limit
    while detached_pids(layout) and time.monotonic() < deadline:
        time.sleep(0.02)
    for lock in (layout.hooks_lock, Path(exporting.lock_path(layout))):
        while lock.exists() and launch.busy(lock) and time.monotonic() < deadline:
            time.sleep(0.02)


def run_hook(argv: Sequence[str], stdin: bytes, env: Dict[str, str], cwd: Path) -> Tuple[float, float, bytes]:
    """One hook as Claude Code runs it: write stdin, read both outputs to their end, reap it.
    Returns its wall time, its CPU time (user + system; a sender it started is not its child by
    then and is not counted) and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                            env=env)
    out, err = proc.communicate(stdin, timeout=60)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0 or err.strip():
        raise BenchError(f"{argv[-1]} exited {proc.returncode}: {err.decode(errors='replace')[:300]}")
    return took, cpu, out


def check(event: str, out: bytes, layout: Layout) -> None:
    if event == "Stop" and b'"additionalContext": "baton: the job is not finished' not in out:
        raise BenchError(f"Stop did not send the model back: {out[:300]!r}")
    if event == "PostToolUse" and b"baton alert: 25 tool calls" not in out:
        raise BenchError(f"PostToolUse raised no alert: {out[:300]!r}")
    if event == "SessionEnd" and out.strip():
        raise BenchError(f"SessionEnd printed {out[:300]!r}")
    for name in ("errors.log", "degraded.json"):
        if (layout.root / name).exists():
            raise BenchError(f"a hook logged a failure: {(layout.root / name).read_text()[-400:]}")


Figures = Dict[str, Dict[str, Dict[str, List[float]]]]  # event -> collector -> "wall"/"cpu" -> ms per run


def measure(project: Path, runs: int, endpoints: Dict[str, str], python: str) -> Figures:
    prepared = prepare(project)
    layout: Layout = prepared["layout"]
    base = {k: v for k, v in os.environ.items() if not k.startswith(DROP)}
    base.update(CLAUDE_PROJECT_DIR=str(project), CLAUDE_PLUGIN_ROOT=str(REPO), CLAUDE_CODE_SESSION_ID=SESSION,
                BATON_FSYNC="1", OTEL_EXPORTER_OTLP_TIMEOUT="1000")
    key, value = TAG.decode().split("=", 1)
    base[key] = value
    results: Figures = {}
    for event in ("Stop", "SessionEnd", "PostToolUse"):
        command, args, _ = hook_command(event, "Bash" if event == "PostToolUse" else "")
        argv = [python if command == "python3" else command, *args]
        stdin = payload(project, event, prepared["transcript"])
        per: Dict[str, Dict[str, List[float]]] = {c: {"wall": [], "cpu": []} for c in COLLECTORS}
        for attempt in range(runs + 1):  # the first round warms the caches and is not counted
            for collector in COLLECTORS:
                env = dict(base)
                if collector != "off":
                    env.update(BATON_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT=endpoints[collector])
                wait_for_detached(layout)
                reset(layout, event, prepared["counters"])
                took, cpu, out = run_hook(argv, stdin, env, project)
                check(event, out, layout)
                if attempt:
                    per[collector]["wall"].append(took * 1000)
                    per[collector]["cpu"].append(cpu * 1000)
        results[event] = per
        progress(f"{project.name}: {event} done")
    return results


def paired(per: Dict[str, Dict[str, List[float]]], figure: str, bad: str) -> float:
    """The median of the round-by-round differences bad - healthy: the runs of one round follow each
    other, so a moment of load hits both and cancels out."""
    return statistics.median(b - h for b, h in zip(per[bad][figure], per["healthy"][figure]))


def table(meta: Dict[str, Any], results: Dict[str, Figures], kicks: Dict[str, float]) -> str:
    lines = [f"# OpenTelemetry export and hook latency ({meta['revision']}, {meta['cpu']}, {meta['nproc']} cores, "
             f"Python {meta['python']}, {meta['runs']} runs each, load average {meta['load']})", "",
             "| job | hook | figure | off | healthy | down | slow | down - healthy | slow - healthy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    worst = {"wall": 0.0, "cpu": 0.0}
    spread: List[float] = []
    for job, per_event in results.items():
        for event, per in per_event.items():
            for figure in ("wall", "cpu"):
                med = {c: statistics.median(per[c][figure]) for c in COLLECTORS}
                down, slow = paired(per, figure, "down"), paired(per, figure, "slow")
                worst[figure] = max(worst[figure], abs(down), abs(slow))
                spread += [statistics.pstdev(per[c][figure]) for c in COLLECTORS] if figure == "wall" else []
                lines.append(f"| {job} | {event} | {figure} | " + " | ".join(f"{med[c]:.1f} ms" for c in COLLECTORS)
                             + f" | {down:+.1f} ms | {slow:+.1f} ms |")
    kick_effect = max(abs(kicks["down"] - kicks["healthy"]), abs(kicks["slow"] - kicks["healthy"]))
    verdict = "ok" if kick_effect <= TARGET_MS else "over"
    lines += ["", "Medians per hook process: wall (stdin written, stdout and stderr read to EOF, reaped) and CPU "
              "(user + system of the hook process alone). The differences are medians of paired, round-by-round "
              f"differences; their largest size here: wall {worst['wall']:.1f} ms, CPU {worst['cpu']:.1f} ms, "
              f"against a run-to-run standard deviation of wall time of {min(spread):.1f}-{max(spread):.1f} ms.", "",
              "All a hook does with telemetry on is `launch.kick`; timed inside a process started as a hook is "
              f"(median of {KICKS} calls, each sender waited for before the next call): "
              + ", ".join(f"{c} {kicks[c]:.2f} ms" for c in COLLECTORS) + ".",
              f"Effect of a bad collector on it: {kick_effect:.2f} ms (target: at most {TARGET_MS:.0f} ms): {verdict}."]
    return "\n".join(lines)


KICKS = 40


KICK = """
import os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from store.monitor import exporting, launch
from store.state.location import Layout
layout = Layout(Path(sys.argv[2]) / ".baton", Path(sys.argv[2]))
lock, on = Path(exporting.lock_path(layout)), os.environ.get("BATON_TELEMETRY") == "1"
times = []
while len(times) < int(sys.argv[3]):
    while lock.exists() and launch.busy(lock):  # a sender left from before: wait, so each call starts one
        time.sleep(0.02)
    start = time.perf_counter()
    started = launch.kick(layout, os.environ)
    times.append((time.perf_counter() - start) * 1000)
    if started:
        os.wait()  # the worker is this process's child: let it finish before the next call
    elif on:
        times.pop()  # another process took the lock meanwhile: not a call that started a sender
print(statistics.median(times))
"""


def kick_costs(project: Path, endpoints: Dict[str, str], python: str) -> Dict[str, float]:
    """``launch.kick`` timed inside a process started as a hook is (``python3 -S -c``), for each
    collector: all a hook does with telemetry on, whatever the collector's state."""
    out: Dict[str, float] = {}
    for collector in COLLECTORS:
        env = {k: v for k, v in os.environ.items() if not k.startswith(DROP)}
        env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1000"
        if collector != "off":
            env.update(BATON_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT=endpoints[collector])
        done = subprocess.run([python, "-S", "-c", KICK, str(REPO), str(project), str(KICKS)], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise BenchError(f"timing launch.kick failed: {done.stderr[-400:]}")
        out[collector] = float(done.stdout.strip())
    return out


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="5 runs, the small job only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(list(argv) or None)
    runs = 5 if args.quick else args.runs
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    python = resolve_interpreter("python3", os.environ, None).real
    work = Path(tempfile.mkdtemp(prefix="baton-bench-telemetry-"))
    healthy, slow = Healthy(), Slow()
    endpoints = {"healthy": healthy.endpoint, "down": closed_port(), "slow": slow.endpoint}
    try:
        jobs = {"small": small_job(work)}
        if not args.quick:
            jobs["large"] = large_job(work)
        results = {name: measure(path, runs, endpoints, python) for name, path in jobs.items()}
        kicks = kick_costs(jobs["small"], endpoints, python)
    except BenchError as exc:
        print(f"bench_telemetry: {exc}", file=sys.stderr)
        return 1
    finally:
        healthy.close()
        slow.close()
        shutil.rmtree(work, ignore_errors=True)
    meta = {**machine(), "revision": revision(), "runs": runs, "load": " ".join(
        f"{x:.1f}" for x in os.getloadavg())}
    print(json.dumps({"meta": meta, "results": results, "kicks": kicks}) if args.json else table(meta, results, kicks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
