#!/usr/bin/env python3
"""Benchmark a Bash call end to end in the real Claude Code CLI: baton's sandbox, Claude Code's own, neither.

The pinned CLI (``dev/install-claude-code``) runs ``-p`` sessions against the scripted stand-in for
the Messages API that the end-to-end tests use (tests/e2e/fakeapi.py). Each session makes
``--calls`` Bash calls, one a turn; a call's time is from the request that asked for it to the
request that carries its result back: Claude Code's own handling, the hooks, the sandbox and the
command. Five set-ups, each with a HOME and a project (a git repository) of its own, their sessions
interleaved so a busy machine disturbs every row alike:

* **neither**: no plugin, no sandbox, ``--allowedTools Bash``;
* **Claude Code's sandbox**: the same with ``{"sandbox": {"enabled": true}}`` in the person's
  ``~/.claude/settings.json`` (it needs bubblewrap and socat; ``dev/test`` installs both);
* **a minimal Python hook**: a plugin whose PreToolUse and PostToolUse hooks on Bash read the JSON
  and print ``{}``, started as baton's are (hooks.json's ``/bin/sh`` launcher, which execs ``python3
  -S -c``): what any Python hook costs a call;
* **baton, no sandbox**: baton's plugin with a job whose NEXT step writes ``src/**``, the plan's
  ``sandbox.enabled`` false (its hooks and its static gate alone);
* **baton's sandbox**: the same job with the sandbox on (the default): PreToolUse builds the
  sandbox, the command runs in bubblewrap behind the launcher that mounts the job's /tmp, PostToolUse
  runs the after-check.

A first session per set-up is not timed (it probes bubblewrap, fills caches). ``python3`` is this
interpreter (not a version manager's shim) for every set-up. Medians with min and max over every
call, and each row's median beside the first's. Standard library only; Linux.

    python3 bench/bench_cli_sandbox.py [--sessions N] [--calls N] [--command CMD] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from e2e.driver import PINNED_VERSION, Claude, find_claude  # noqa: E402
from e2e.fakeapi import FakeAPI, text, tool_use  # noqa: E402
from e2e.messages_api import Block  # noqa: E402

SETUPS = ("neither", "claude-code-sandbox", "minimal-hooks", "baton-no-sandbox", "baton-sandbox")
LABELS = {"neither": "neither", "claude-code-sandbox": "Claude Code's sandbox",
          "minimal-hooks": "a minimal Python hook before and after (no sandbox)",
          "baton-no-sandbox": "baton, no sandbox (its hooks only)", "baton-sandbox": "baton's sandbox"}
MINIMAL = "import json, sys; json.load(sys.stdin); print('{}')"  # what any Python hook costs Claude Code
PLAN = {"job": "bench", "protect": ["secrets/**"],
        "steps": [{"id": "build", "writes": ["src/**"]}, {"id": "ship", "approval": True}]}


class Timed:
    """A FakeAPI script: ``calls`` turns of one Bash call each, then the end; the arrival time of
    every main-conversation request."""

    def __init__(self, calls: int, command: str) -> None:
        self.calls, self.command, self.arrivals, self.served = calls, command, [], 0  # type: ignore[var-annotated]

    def __call__(self, body: Dict[str, Any]) -> List[Block]:
        self.arrivals.append(time.perf_counter())
        self.served += 1
        if self.served > self.calls:
            return [text("done")]
        return [tool_use("Bash", {"command": self.command, "description": "bench"}, id=f"toolu_b{self.served}")]

    def intervals(self) -> List[float]:
        return [b - a for a, b in zip(self.arrivals, self.arrivals[1:])][:self.calls]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True,
                   capture_output=True)


def setup(work: Path, name: str) -> Dict[str, Any]:
    home, root = work / name / "home", work / name / "project"
    for rel in ("src/main.py", "docs/a.md", "secrets/token", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel + "\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (home / ".claude").mkdir(parents=True)
    if name == "claude-code-sandbox":
        (home / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    plugin = None
    if name == "minimal-hooks":
        plugin = work / "minimal"
        (plugin / ".claude-plugin").mkdir(parents=True, exist_ok=True)
        (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "minimal", "version": "0.0.1"}))
        (plugin / "hooks").mkdir(exist_ok=True)
        (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {
            event: [{"matcher": "Bash", "hooks": [minimal_hook(event)]}] for event in ("PreToolUse", "PostToolUse")}}))
    if name.startswith("baton"):
        plan = dict(PLAN, sandbox={"enabled": name == "baton-sandbox"})
        (root / ".baton").mkdir()
        (root / ".baton" / "plan.json").write_text(json.dumps(plan))
        plugin = work / "plugin"
        if not plugin.exists():
            plugin.mkdir()
            for part in (".claude-plugin", "hooks", "commands", "bin", "store"):
                shutil.copytree(REPO / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
    return {"home": home, "root": root, "plugin": plugin}


def minimal_hook(event: str) -> Dict[str, Any]:
    """The minimal hook, started as baton's PreToolUse hook is: the same command and launcher (its first
    two arguments) from baton's hooks.json, then the minimal code in place of baton's bootstrap."""
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    baton = hooks["PreToolUse"][0]["hooks"][0]
    launcher = baton["args"][:2] if baton["command"] != "python3" else ["-S", "-c"]
    return {"type": "command", "command": baton["command"],
            "args": [*launcher, MINIMAL, "${CLAUDE_PLUGIN_ROOT}", event], "timeout": 10}


def python_first(work: Path) -> Dict[str, str]:
    """PATH with this interpreter as ``python3`` first: the hooks start ``python3``, and a version
    manager's shim (pyenv's is a shell script) would be timed with them."""
    shim = work / "bin"
    if not shim.exists():
        shim.mkdir()
        (shim / "python3").symlink_to(os.path.realpath(sys.executable))
    return {"PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}


def session(exe: Path, found: Dict[str, Any], calls: int, command: str) -> List[float]:
    script = Timed(calls, command)
    with FakeAPI(script) as api:
        claude = Claude(exe, api.base_url, found["home"])
        try:
            run = claude.run("run the commands", cwd=found["root"], plugin_dir=found["plugin"], timeout=300,
                             env=python_first(found["home"].parent.parent))
        finally:
            claude.kill_all()
    if run.returncode != 0 or script.served <= calls:
        raise SystemExit(f"bench: a session ended early (exit {run.returncode}): {run.stderr[-400:]}")
    return script.intervals()


def check_outputs(found: Dict[str, Any]) -> None:
    """A call that was refused or asked would time the refusal: every row must have run its command."""
    log = found["home"] / ".claude" / "projects"
    if not log.exists():
        raise SystemExit("bench: no transcript was written")
    text_of = "\n".join(p.read_text(errors="replace") for p in log.rglob("*.jsonl"))
    for refusal in ("baton denied", "requires approval", "Operation stopped by hook"):
        if refusal in text_of:
            raise SystemExit(f"bench: a call was refused ({refusal!r}); the figures would not be the command's")


def measure(sessions: int, calls: int, command: str, setups: Sequence[str]) -> Dict[str, List[float]]:
    exe = find_claude()
    work = Path(tempfile.mkdtemp(prefix="bench-cli-sandbox-"))
    try:
        found = {name: setup(work, name) for name in setups}
        for name in setups:  # untimed: the probe, the plugin's first compile, the CLI's own caches
            session(exe, found[name], 1, command)
        times: Dict[str, List[float]] = {name: [] for name in setups}
        for _ in range(sessions):
            for name in setups:
                times[name] += session(exe, found[name], calls, command)
        for name in setups:
            check_outputs(found[name])
        return times
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(times: Dict[str, List[float]], command: str) -> str:
    reference = statistics.median(next(iter(times.values())))
    lines = [f"A Bash call `{command}`, end to end in Claude Code {PINNED_VERSION}: "
             f"{len(next(iter(times.values())))} calls per row",
             "", "| set-up | median ms | min | max | beside the first row |", "|---|---:|---:|---:|---:|"]
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(f"| {LABELS[name]} | {med * 1000:.0f} | {min(values) * 1000:.0f} | {max(values) * 1000:.0f} | "
                     f"{med - reference:+.3f} s ({med / reference:.2f}x) |")
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=4, help="timed sessions per set-up (default 4)")
    parser.add_argument("--calls", type=int, default=5, help="Bash calls per session (default 5)")
    parser.add_argument("--command", default="git status --short", help="the Bash command (default: git status)")
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, from {', '.join(SETUPS)}")
    parser.add_argument("--json", action="store_true", help="every call's seconds instead of the table")
    args = parser.parse_args(list(argv) or None)
    setups = [s for s in args.setups.split(",") if s]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        parser.error(f"unknown set-up {unknown[0]!r}")
    missing = [tool for tool in ("bwrap", "socat") if shutil.which(tool) is None]
    if missing:
        print(f"bench: {' and '.join(missing)} missing (dev/test installs them)", file=sys.stderr)
        return 2
    times = measure(args.sessions, args.calls, args.command, setups)
    if args.json:
        print(json.dumps(times, indent=1))
    else:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; sessions interleaved")
        print(report(times, args.command))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
