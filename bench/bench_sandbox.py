#!/usr/bin/env python3
"""Benchmark what baton's sandbox adds to a Bash call, and to the hooks, against the same without it.

In one temporary project (a git repository, a job whose NEXT step writes ``src/**``, a protect glob)
it measures, interleaved so that a busy machine disturbs every row alike:

* a Bash call as Claude Code's Bash tool makes it (``bash -c 'source <snapshot>; eval <command>;
  pwd -P >| <file>'``), for ``true`` and for ``git status --short``: the command itself, and the
  command rewritten by baton to run in bubblewrap (the rewrite made once, as the hook would), with a
  private /tmp and with the host's (the launcher that mounts the job's /tmp as an overlay first);
  and for ``true`` with the host's /tmp, where the kernel has Landlock scopes, with the abstract-socket
  scope of a host-network step: put on by that launcher (as the gate starts it), or by a Python of
  its own between the launcher and bwrap (as before);
* the PreToolUse hook on that Bash call, started exactly as ``hooks/hooks.json`` starts it, with the
  sandbox (it reads the person's rules, builds bwrap's arguments, writes the run's files) and in the
  fallback (no sandbox: the static gate alone), beside ``python3 -S -c pass``;
* the PostToolUse hook after a sandboxed call (it finds the original command and runs the
  after-check) and after an unsandboxed one;
* in this process, building bwrap's arguments and the rewrite (what the hook adds on its hot path).

Medians with min and max, and the median CPU time (user + system of the process and the children it
waited for); each measured process has Python's bytecode cache on (in a private
folder). Standard library only; Linux with bubblewrap.

    python3 bench/bench_sandbox.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(REPO))

from store.sandbox import bwrap_args, landlock_scope, probe, rewrite  # noqa: E402
from store.state import journal  # noqa: E402
from store.state.location import Layout  # noqa: E402

PLAN = {"protect": ["secrets/**"], "steps": [{"id": "build", "writes": ["src/**"]}, {"id": "ship", "approval": True}]}
HOOK = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]


def project(work: Path) -> Dict[str, Any]:
    root, home = work / "project", work / "home"
    for rel in ("src/main.py", "docs/a.md", "secrets/token", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True)
    layout = Layout(root / ".baton", root)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps(PLAN))
    journal.append(layout, "build", "running", "bench")
    snapshot = home / ".claude" / "shell-snapshots" / "snapshot-bash-1-bench.sh"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text('ll() { ls -l "$@"; }\n')
    (home / ".cache").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "BATON", "PYTHONDONTWRITEBYTECODE"))}
    env.update(HOME=str(home), CLAUDE_PROJECT_DIR=str(root), BATON_FSYNC="0",
               PYTHONPYCACHEPREFIX=str(work / "pycache"))
    return {"root": root, "home": home, "layout": layout, "snapshot": snapshot, "env": env}


CPU: List[float] = [0.0]  # the user + system seconds of the last timed process and the children it waited for


def timed(argv: Sequence[str], cwd: Path, env: Dict[str, str], stdin: bytes = b"") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if proc.returncode != 0:
        raise SystemExit(f"bench: {argv[:3]} exited {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return seconds


def bash_tool(p: Dict[str, Any], command: str) -> List[str]:
    """The Bash tool's own line around ``command`` (see the host notes on how it runs a command)."""
    line = (f"source {p['snapshot']} 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && "
            f"eval {rewrite.quote(command)} && pwd -P >| {p['root'].parent / 'cwd'}")
    return ["/bin/bash", "-c", line]


def sandboxed(p: Dict[str, Any], command: str, name: str, host_tmp: bool, scope: str = "") -> str:
    """The hook's rewrite of ``command``: with ``host_tmp``, behind the launcher that mounts the job's /tmp
    as an overlay of the host's (store/sandbox/scratch.py), else with a private /tmp. ``scope``: with the
    abstract-socket scope of a host-network step, as the gate starts it (``"launcher"``: in the process
    that mounts the job's /tmp), or as a program of its own after that one (``"program"``: as before)."""
    policy = bwrap_args.Policy(str(p["root"]), str(p["layout"].root), str(p["home"] / ".config/baton"),
                               str(p["home"]), ("src/**",), ("secrets/**",), host_tmp=host_tmp)
    args_file = str(p["layout"].root / f"bench-{name}-{host_tmp}{'-' + scope if scope else ''}.args")
    built = bwrap_args.build(policy, run=f"bench-{name}")
    rewrite.write_args(args_file, built.args)
    bwrap = probe.bubblewrap(p["env"]).bwrap
    if scope == "launcher":
        launch = built.launch([*landlock_scope.launch(), bwrap])
    elif scope == "program":
        launch = [*built.launch([]), *landlock_scope.launch(), bwrap]
    else:
        launch = built.launch([bwrap])
    script = rewrite.script_of(args_file)
    rewrite.write_script(script, launch, args_file, args_file + ".started")
    return rewrite.sandboxed(command, script)


def hook_argv(event: str) -> List[str]:
    entry = HOOK[event][0]["hooks"][0]
    # hooks.json: /bin/sh -c LAUNCH <bootstrap> ROOT EVENT, which runs python3 -S -c <bootstrap> ROOT EVENT
    return [sys.executable, "-S", "-c"] + [a.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for a in entry["args"][2:]]


def payload(p: Dict[str, Any], event: str, command: str, call: str) -> bytes:
    data: Dict[str, Any] = {"session_id": "bench", "cwd": str(p["root"]), "hook_event_name": event,
                            "permission_mode": "acceptEdits", "tool_name": "Bash", "tool_use_id": call,
                            "tool_input": {"command": command, "description": "bench"}}
    if event == "PostToolUse":
        data["tool_response"] = {"stdout": "", "stderr": ""}
    return json.dumps(data).encode()


def set_probe(p: Dict[str, Any], ok: bool) -> None:
    bwrap = probe.find_bwrap() or probe.BWRAP_PATHS[0]
    probe.save(p["env"], probe.cache_key(bwrap), time.time(), probe.Probe(ok, bwrap, "" if ok else "bench: forced"))


def in_process(p: Dict[str, Any], runs: int) -> List[float]:
    policy = bwrap_args.Policy(str(p["root"]), str(p["layout"].root), str(p["home"] / ".config/baton"), str(p["home"]),
                            ("src/**",), ("secrets/**",))
    found = []
    for _ in range(runs):
        start = time.perf_counter()
        bwrap_args.build(policy)
        rewrite.script(["/usr/bin/bwrap"], "/p/.baton/run/x.args", "/p/.baton/run/x.started")
        rewrite.sandboxed("git status --short", "/p/.baton/run/x.sh")
        found.append(time.perf_counter() - start)
    return found


def measure(p: Dict[str, Any], runs: int) -> Dict[str, List[float]]:
    rows: Dict[str, Callable[[], float]] = {}
    for label, command in (("true", "true"), ("git status", "git status --short")):
        name = label.replace(" ", "-")
        plain, boxed = bash_tool(p, command), bash_tool(p, sandboxed(p, command, name, False))
        overlay = bash_tool(p, sandboxed(p, command, name, True))
        rows[f"Bash `{command}`"] = lambda argv=plain: timed(argv, p["root"], p["env"])
        rows[f"Bash `{command}`, sandboxed, private /tmp"] = lambda argv=boxed: timed(argv, p["root"], p["env"])
        rows[f"Bash `{command}`, sandboxed, the host's /tmp"] = lambda argv=overlay: timed(argv, p["root"], p["env"])
        if command == "true" and landlock_scope.wanted("host"):
            for scope, how in (("program", "a program of its own"), ("launcher", "in the /tmp launcher")):
                argv = bash_tool(p, sandboxed(p, command, name, True, scope))
                rows[f"Bash `{command}`, sandboxed, the host's /tmp, the socket scope {how}"] = \
                    lambda argv=argv: timed(argv, p["root"], p["env"])
    rows["python3 -S -c pass"] = lambda: timed([sys.executable, "-S", "-c", "pass"], p["root"], p["env"])

    def pre(ok: bool) -> float:
        set_probe(p, ok)
        return timed(hook_argv("PreToolUse"), p["root"], p["env"], payload(p, "PreToolUse", "ls src", "toolu_b"))

    def post(ok: bool) -> float:
        set_probe(p, ok)
        timed(hook_argv("PreToolUse"), p["root"], p["env"], payload(p, "PreToolUse", "ls src", "toolu_p"))
        return timed(hook_argv("PostToolUse"), p["root"], p["env"], payload(p, "PostToolUse", "ls src", "toolu_p"))

    rows["PreToolUse Bash hook, sandboxed"] = lambda: pre(True)
    rows["PreToolUse Bash hook, fallback"] = lambda: pre(False)
    rows["PostToolUse Bash hook, after a sandboxed call"] = lambda: post(True)
    rows["PostToolUse Bash hook, after an unsandboxed call"] = lambda: post(False)
    for fn in rows.values():  # warm up: bytecode caches, the probe's first run
        fn()
    found: Dict[str, List[float]] = {name: [] for name in rows}
    for _ in range(runs):
        for name, fn in rows.items():
            found[name].append(fn())
            CPUS.setdefault(name, []).append(CPU[0])
    found["argv build and rewrite, in the hook's process"] = in_process(p, runs * 10)
    return found


CPUS: Dict[str, List[float]] = {}  # each row's CPU seconds, beside its wall times


def report(found: Dict[str, List[float]]) -> str:
    def med(name: str) -> float:
        return statistics.median(found[name]) * 1000

    lines = ["| measured | median ms | min | max | CPU ms | added over |", "|---|---|---|---|---|---|"]
    against = {"Bash `true`, sandboxed, private /tmp": "Bash `true`",
               "Bash `true`, sandboxed, the host's /tmp": "Bash `true`, sandboxed, private /tmp",
               "Bash `git status --short`, sandboxed, private /tmp": "Bash `git status --short`",
               "Bash `git status --short`, sandboxed, the host's /tmp":
                   "Bash `git status --short`, sandboxed, private /tmp",
               "Bash `true`, sandboxed, the host's /tmp, the socket scope a program of its own":
                   "Bash `true`, sandboxed, the host's /tmp",
               "Bash `true`, sandboxed, the host's /tmp, the socket scope in the /tmp launcher":
                   "Bash `true`, sandboxed, the host's /tmp",
               "PreToolUse Bash hook, sandboxed": "PreToolUse Bash hook, fallback",
               "PostToolUse Bash hook, after a sandboxed call": "PostToolUse Bash hook, after an unsandboxed call"}
    for name, values in found.items():
        base = against.get(name)
        cpu = statistics.median(CPUS[name]) * 1000 if name in CPUS else None
        added = f"+{med(name) - med(base):.1f} ms over {base}" if base else ""
        if base and cpu is not None:
            added += f" (CPU {cpu - statistics.median(CPUS[base]) * 1000:+.1f} ms)"
        lines.append(f"| {name} | {med(name):.2f} | {min(values) * 1000:.2f} | {max(values) * 1000:.2f} | "
                     f"{'' if cpu is None else f'{cpu:.1f}'} | {added} |")
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(list(argv))
    work = Path(tempfile.mkdtemp(prefix="baton-bench-sandbox-"))
    try:
        p = project(work)
        if not probe.bubblewrap(p["env"], fresh=True).ok:
            print("bench: bubblewrap cannot run the sandbox here", file=sys.stderr)
            return 1
        found = measure(p, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({k: statistics.median(v) for k, v in found.items()}, indent=1))
    else:
        print(f"{args.runs} runs each, interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(report(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
