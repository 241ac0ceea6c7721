#!/usr/bin/env python3
"""Benchmark what finding the export's OTEL_* settings costs the hook that starts a sender.

Claude Code strips OTEL_* from its hooks, so before a hook starts a detached sender it looks for
them (``store.monitor.export_settings.find``): baton's telemetry file, its own environment, then
Claude Code's launch environment (``/proc/$CLAUDE_PID/environ``, after checking that process is
an ancestor) and the ``env`` of its settings files. This runs the lookup the way a hook does: in a
child of a stand-in for Claude Code started with the variables in its environment, with none in
its own, ``CLAUDE_PID`` naming that stand-in, and a user ``settings.json``; side by side, in the
same process and interleaved, with the reference, reading its own environment as baton did before
(which inside Claude Code found nothing). Each figure is the median time of one call.

    python3 bench/bench_otel_settings.py [--calls N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from store.monitor import export_settings
project, calls = sys.argv[2], int(sys.argv[3])
env = dict(os.environ)
settings_file = export_settings.file_path(env)
cases = {
    "reference: own environment only": lambda: export_settings.own(env),
    "Claude Code's environment (/proc, settings.json)": lambda: export_settings.find(env, project),
    "baton's telemetry file": lambda: export_settings.find({**env, "XDG_CONFIG_HOME": sys.argv[4]}, project),
    "own environment (a terminal)": lambda: export_settings.find({**env, "OTEL_SERVICE_NAME": "x"}, project),
}
assert export_settings.find(env, project).source.startswith("Claude Code's environment"), "not read from /proc"
times = {name: [] for name in cases}
for _ in range(calls):
    for name, case in cases.items():
        start = time.perf_counter_ns()
        case()
        times[name].append(time.perf_counter_ns() - start)
print(json.dumps(times))
"""

STAND_IN = r"""
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
env["CLAUDE_PID"] = str(os.getpid())
sys.exit(subprocess.run([sys.executable, "-S", "-c", sys.argv[1], *sys.argv[2:]], env=env).returncode)
"""


def measure(calls: int) -> Dict[str, List[int]]:
    with tempfile.TemporaryDirectory(prefix="baton-bench-otel-") as tmp:
        base = Path(tmp)
        home, project, xdg = base / "home", base / "project", base / "xdg"
        (home / ".claude").mkdir(parents=True)
        (project / ".claude").mkdir(parents=True)
        (xdg / "baton").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text(json.dumps(
            {"env": {"OTEL_RESOURCE_ATTRIBUTES": "team=relay"}, "permissions": {"allow": ["Bash(ls)"] * 20}}))
        (xdg / "baton" / "telemetry.env").write_text("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318\n")
        (xdg / "baton" / "telemetry.env").chmod(0o600)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               **{f"FILLER_{i}": "x" * 40 for i in range(60)},  # a shell's environment is a few KB
               "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
               "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20token"}
        out = subprocess.run([sys.executable, "-S", "-c", STAND_IN, CHILD, str(REPO), str(project), str(calls),
                              str(xdg)], env=env, capture_output=True, text=True, check=True).stdout
    found: Dict[str, List[int]] = json.loads(out)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times = measure(args.calls)
    if args.json:
        print(json.dumps(times))
        return 0
    print(f"finding the export's settings, {args.calls} calls each, interleaved (Python "
          f"{sys.version.split()[0]}, {time.strftime('%Y-%m-%d')})\n")
    print(f"| {'place the settings are found':<50} | median µs | p90 µs |")
    print(f"|{'-' * 52}|-----------|--------|")
    for name, values in times.items():
        p90 = sorted(values)[int(len(values) * 0.9)]
        print(f"| {name:<50} | {statistics.median(values) / 1000:>9.1f} | {p90 / 1000:>6.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
