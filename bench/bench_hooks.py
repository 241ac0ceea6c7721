#!/usr/bin/env python3
"""Benchmark each baton hook as a whole process, started exactly as ``hooks/hooks.json`` says.

For each ledger size (default 1,000 and 1,000,000 records) it builds a temp project whose
``.baton/`` holds a 40-step plan (the NEXT step approved and carrying rich policy: tools, writes
globs, bash patterns; job-wide limits, protect globs and rules), a chained ledger of that many
records and the snapshot ``state.json`` built from it, as after normal use. Then it runs, as child
processes, the command hooks.json gives for each event (its ``/bin/sh`` launcher, which execs
``python3`` on the bootstrap code; ``${CLAUDE_PLUGIN_ROOT}`` replaced by this repository in each
argument, ``CLAUDE_PROJECT_DIR`` pointing at the temp project, a payload shaped like Claude Code's on
stdin) for:

* SessionStart (source ``startup``);
* UserPromptSubmit: an ordinary prompt, and ``/baton:brief``;
* PreToolUse Write: allowed, and denied (outside the step's ``writes``);
* PreToolUse Bash: a read-only command (handed back to run in the sandbox), and a write that is denied;
* PostToolUse Write, PostToolUseFailure Bash, Stop;
* and, in a project beside it with no job, SessionStart, a prompt, a Write, a WebFetch, a Bash call,
  PostToolUse Write and Stop (each must answer with nothing and load almost nothing);

beside the reference, a minimal Python hook started the same way (through the launcher, ``python3 -S
-c`` with code that parses the JSON on stdin and prints ``{}``, the same arguments, environment,
folder and payload), the same hook with python3 started directly (the difference is the launcher's
cost), and ``python3 -c pass`` and ``python3 -S -c pass`` (the interpreter's own start-up, with and
without site-packages). Each run's output is checked (the denied Write printed a deny naming the
step's ``writes``, SessionStart printed the brief, PostToolUse counted the call, nothing was logged
to ``errors.log``...), so a crashing hook cannot pass for a fast one. The report gives the median,
min, max and interquartile range of the wall time per hook and size, the median CPU time (which a
busy machine disturbs less), each hook's ratio to the minimal hook (wall and CPU), and a verdict
against the target: every hook within 1.3x of the minimal hook, at every ledger size, in wall time
and in CPU time (on an idle machine the two agree; on a busy one the CPU time is the steadier). The
older bar, 15 ms over ``python3 -c pass``, is still reported in the summary. Standard library only;
Linux; the temp tree under /tmp is removed at the end.

    python3 bench/bench_hooks.py [--sizes 1000,1000000] [--runs N] [--quick] [--json] [--python PATH] [--rules]
                                 [--direct]

``--direct`` starts python3 on each hook's bootstrap code directly, as hooks.json did before the
launcher: beside a run without it, what the launcher costs for each hook.

It also times PreToolUse for WebFetch and an MCP tool, which start the gate in every project.
``--rules`` adds the plan's invariant rules (protect_branches, deny_content, check_after_write,
allow_hosts, limits.external_ops), makes the project a git checkout with a bare remote, and adds
the calls they judge: a push to main (denied), a curl to an allowed host (counted), a Write
checked after it lands.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

sys.dont_write_bytecode = True  # leave no __pycache__ in the work tree (bench_store does the same)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import (
    REPO,
    BenchError,
    Figure,
    Run,
    check_samples,
    launch,
    machine,
    mb,
    ms,
    parse_sizes,
    plan_ids,
    progress,
    revision,
    write_ledger,
)

from store.cli import actions
from store.monitor import figures
from store.sandbox import rewrite, runs, scratch
from store.state import journal
from store.state.brief import COMPLETE
from store.state.job import Job
from store.state.location import Layout

SHELLSCAN = REPO / "store" / "shell" / "scan.py"
DEFAULT_SIZES = (1_000, 1_000_000)
QUICK_SIZES = (1_000, 100_000)
MIN_SIZE = 100
DEFAULT_RUNS = 15
QUICK_RUNS = 5
TARGET_MS = 15.0  # the older bar: over `python3 -c pass`
TARGET_RATIO = 1.3  # the target: a hook's median over the minimal hook's
SESSION = "5f0c2a9e-3b1d-4e7a-9c44-2d8e6b1f0a37"
PROMPT_ID = "0b7d4e21-9a6c-4f3e-8d15-7c2a9e4b6f10"
NEXT_INDEX = 27  # s28-write-ledger: a "write" step, the job's NEXT in every project built here
TAIL = 3  # records appended through baton's own code after the bulk ledger (see build_project)
PLUGIN_ROOT = "${CLAUDE_PLUGIN_ROOT}"
DROP_ENV = ("BATON_DIR", "BATON_FSYNC", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA",
            "CLAUDE_CODE_SESSION_ID", "CLAUDE_ENV_FILE", "CLAUDE_EFFORT", "XDG_CONFIG_HOME",
            "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
RULES = {"on": False}  # --rules
INVARIANTS: List[Dict[str, Any]] = [
    {"id": "main-reviewed", "protect_branches": ["main", "release/*"], "reason": "main changes only through review"},
    {"id": "prod-config", "deny_content": {"files": ["config/prod*.yaml"], "pattern": r"verify_ssl:\s*false"},
     "reason": "production never runs in debug"},
    {"id": "syntax", "check_after_write": "default", "reason": "a broken file is not done"},
    {"id": "egress", "allow_hosts": ["api.github.com", "*.internal.example"], "allow_mcp": ["github"],
     "reason": "data leaves only for GitHub and our own services"},
]
# the reference: what any Python hook must do (parse the payload, print a JSON answer), run as hooks.json
# runs baton's (same interpreter, -S -c, the same two arguments, environment, folder and stdin)
MINIMAL_HOOK = "import json, sys; json.load(sys.stdin); print('{}')"
MINIMAL = "minimal"
MINIMAL_PAYLOAD = "pre-write-allow"  # the stdin the minimal hook parses: a PreToolUse Write payload
MINIMAL_DIRECT = "minimal-direct"
# the references, (key, label, argv), set by main: the interpreter alone, with and without site, and the minimal hook
# started as the hooks are (through hooks.json's launcher, or directly with --direct); beside the launcher, the same
# minimal hook with python3 started directly, so each run shows what the launcher costs
BARE: List[Tuple[str, str, List[str]]] = []
# hooks.json's launcher: `/bin/sh -c '...; exec python3 -S -c "$0" "$@" "$here"' <bootstrap> <root> <event>`
LAUNCHER_EXEC = re.compile(r'\bexec (\S+) -S -c "\$0" "\$@"')
# the job's figures as another checkout (--baseline) keeps them after normal use, by its own code: a
# checkout that keeps them in another file or form would otherwise start each Stop from none
FIGURES_OF = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
              "from store.monitor import figures; from store.state.job import Job; "
              "from store.state.location import Layout; project = Path(sys.argv[2]); "
              "layout = Layout(project / '.baton', project); figures.refresh(layout, Job(layout, {}, save=False).plan)")


# ----------------------------------------------------------------------------- the project


def rich_plan(ids: Sequence[str]) -> Dict[str, Any]:
    """The plan: 40 steps with phases and policy, the NEXT one (``ids[NEXT_INDEX]``) the richest."""
    steps: List[Dict[str, Any]] = []
    for i, sid in enumerate(ids):
        _, verb, noun = sid.split("-", 2)
        step: Dict[str, Any] = {"id": sid, "title": f"{verb.capitalize()} the {noun} module"}
        if verb in ("survey", "review"):
            step["phase"] = "discovered"
        elif verb == "design":
            step.update(phase="approved", writes=[f"docs/design/{noun}.md"])
        elif verb == "test":
            step.update(phase="validated", validate=f"python3 -m pytest -q tests/test_{noun}.py")
        elif verb == "document":
            step.update(phase="implemented", writes=["docs/**", "README.md"])
        else:
            step.update(phase="implemented", writes=[f"src/{noun}/**", f"tests/test_{noun}*.py"],
                        bash=["pytest*", "python3 -m pytest*", "ruff check*"])
        if i == NEXT_INDEX:
            step = {
                "id": sid, "title": "Write the ledger writer (append, seal, fsync) and its tests",
                "phase": "implemented", "approval": True,
                "tools": ["Read", "Write", "Edit", "NotebookEdit", "Bash", "Skill", "WebFetch",
                          "mcp__github__get_issue"],
                "writes": ["src/ledger/**", "src/common/io.py", "tests/test_ledger*.py", "tests/fixtures/ledger/**",
                           "docs/ledger.md", "CHANGELOG.md"],
                "bash": ["pytest*", "python3 -m pytest*", "make test*", "make lint*", "ruff check*",
                         "ruff format src/ledger*", "mypy src/ledger*", "git add src/ledger*", "git add tests/*",
                         "git commit -m *"],
                "validate": "python3 -m pytest -q tests/test_ledger.py",
            }
        steps.append(step)
    return {
        "job": "ledger-rewrite",
        "limits": {"tool_calls": 100_000, "changed_files": 40, "stop_blocks": 12, "calls_without_record": 25,
                   "repeated_failures": 3, "validate_seconds": 300,
                   **({"external_ops": 1_000_000} if RULES["on"] else {})},
        "protect": ["pyproject.toml", "LICENSE", ".github/**", "src/vendor/**"],
        "rules": [{"id": "no-push", "deny_bash": "git push*", "reason": "the person pushes, after review"},
                  {"id": "no-force", "deny_bash": "*--force*", "reason": "history is never rewritten"},
                  {"id": "no-rm-rf", "deny_bash": "rm -rf *", "reason": "delete files one by one, by name"},
                  {"id": "no-pipe-sh", "deny_bash": "curl * | sh*"}][0 if not RULES["on"] else 1:] + (
                      INVARIANTS if RULES["on"] else []),
        "steps": steps,
    }


SOURCE = '''"""The ledger writer: one sealed record per append, under the lock."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict

from ledger.format import format_line, seal
from ledger.lock import locked


def append(path: Path, fields: Dict[str, Any], sync: bool = True) -> Dict[str, Any]:
    """Append one record chained to the last one; return it."""
    with locked(path.with_name("lock")):
        last = read_last(path)
        seq, prev = (last["seq"] + 1, last["hash"]) if last else (1, "0" * 32)
        record = seal(fields, seq, prev)
        fd = os.open(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, format_line(record))
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    return record
'''


@dataclass
class Project:
    """One temp project and what the payloads and checks need to know about it."""

    size: int
    root: Path  # the project directory (real path), also the session's cwd
    data: Path  # CLAUDE_PLUGIN_DATA
    config: Path  # XDG_CONFIG_HOME (the approval key)
    transcripts: Path
    next_id: str = ""
    records: int = 0
    ledger_bytes: int = 0
    build_seconds: float = 0.0
    snapshot_seconds: float = 0.0
    empty: Optional[Path] = None  # a project beside it with no job (no .baton/), for the "no job" rows

    @property
    def state(self) -> Path:
        return self.root / ".baton"

    @property
    def layout(self) -> Layout:
        return Layout(self.state, self.root)

    def transcript(self, session: str) -> Path:
        return self.transcripts / f"{session}.jsonl"


def transcript_text(session: str, turns: int = 24) -> str:
    """A short session's transcript, shaped like Claude Code's (the Stop hook sums its usage)."""
    lines = []
    for t in range(turns):
        ts = f"2025-06-01T10:{t:02d}:00.000Z"
        lines.append({"type": "user", "sessionId": session, "uuid": str(uuid.UUID(int=2 * t + 1)), "timestamp": ts,
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{t:04d}",
                                                                "content": "ok\n" + "x = 1\n" * 40}]}})
        lines.append({"type": "assistant", "sessionId": session, "uuid": str(uuid.UUID(int=2 * t + 2)), "timestamp": ts,
                      "message": {"role": "assistant", "model": "claude-opus-5-5",
                                  "content": [{"type": "text", "text": "Next I edit the writer. " * 20}],
                                  "usage": {"input_tokens": 1200 + t, "output_tokens": 340,
                                            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 18000}}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def git_checkout(root: Path, remote: Path, env: Mapping[str, str]) -> None:
    """``root`` a git checkout on branch feature; ``origin`` a bare repository holding main."""
    genv = {**env, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
    for cwd, args in ((root.parent, ["init", "-q", "--bare", "-b", "main", str(remote)]),
                      (root, ["init", "-q", "-b", "main"]), (root, ["add", "src", "tests"]),
                      (root, ["commit", "-qm", "start"]), (root, ["remote", "add", "origin", str(remote)]),
                      (root, ["push", "-q", "-u", "origin", "main"]), (root, ["checkout", "-qb", "feature"])):
        proc = subprocess.run(["git", *args], cwd=str(cwd), env=genv, capture_output=True, text=True)
        if proc.returncode:
            raise BenchError(f"git {' '.join(args)}: {proc.stderr.strip()}")


def build_project(work: Path, size: int, ids: Sequence[str], env: Dict[str, str],
                  others: Sequence[Path] = ()) -> Project:
    """The project as after normal use: ``size`` records and an up-to-date ``state.json``.

    ``size - TAIL`` records come from bench_store's fast writer (byte-identical to baton's own,
    a sample is checked). The snapshot is then built once by ``store.state.journal.read_state`` (the
    one-off rebuild), and the last records go through baton's own ``journal.append`` and
    ``actions.approve_step``: any step before NEXT left unfinished by the bulk ledger is recorded
    done, a Stop hook's note pads the tail to ``TAIL`` records, then NEXT is approved (a signed
    approval, as /baton:approve writes it) and recorded running.
    """
    folder = work / f"n{size}"
    root = folder / "project"
    project = Project(size, root, folder / "plugin-data", folder / "config", folder / "transcripts")
    for d in (root / "src" / "ledger", root / "src" / "server", root / "tests", root / "docs", project.data,
              project.transcripts):
        d.mkdir(parents=True, exist_ok=True)
    project.root = root.resolve()
    project.empty = (folder / "no-job").resolve()
    project.empty.mkdir()
    (root / "src" / "ledger" / "writer.py").write_text(SOURCE, encoding="utf-8")
    (root / "src" / "server" / "settings.py").write_text("FSYNC = False\nTIMEOUT = 10\n", encoding="utf-8")
    (root / "tests" / "test_ledger.py").write_text("def test_append() -> None:\n    assert True\n", encoding="utf-8")
    project.state.mkdir()
    if RULES["on"]:
        git_checkout(root, folder / "remote.git", env)
    (project.state / "plan.json").write_text(json.dumps(rich_plan(ids), indent=2) + "\n", encoding="utf-8")
    (project.state / ".gitignore").write_text(actions.GITIGNORE, encoding="utf-8")
    ledger = project.layout.ledger

    progress(f"{size:,} records: writing the ledger")
    start = time.perf_counter()
    bulk = size - TAIL
    samples = write_ledger(ledger, bulk, ids)
    project.build_seconds = time.perf_counter() - start
    check_samples(samples, ledger, bulk)

    progress(f"{size:,} records: building state.json once, then the last {TAIL} records through baton")
    start = time.perf_counter()
    snap = journal.read_state(project.layout).snapshot  # rebuilds from the whole ledger, saves state.json
    project.snapshot_seconds = time.perf_counter() - start
    nxt = ids[NEXT_INDEX]
    unfinished = [s for s in ids[:NEXT_INDEX] if str(snap.steps.get(s, {}).get("status")) not in COMPLETE]
    for sid in unfinished:
        journal.append(project.layout, sid, "done", "finished: all tests green", session=SESSION)
    for _ in range(TAIL - 2 - len(unfinished)):
        journal.append(project.layout, nxt, "stop", f"session ended with {nxt} still NEXT: waiting for a "
                       f"person's approval of {nxt}", session=SESSION)
    if str(snap.steps.get(nxt, {}).get("status")) in COMPLETE:  # an approval counts only while its step waits
        journal.append(project.layout, nxt, "failed", "reopened for the benchmark", session=SESSION)
    setup_env = hook_env(env, project, "UserPromptSubmit", SESSION)  # as /baton:approve runs: the key in config/
    actions.approve_step(project.layout, setup_env, nxt, "go ahead", "/baton:approve typed in the prompt")
    journal.append(project.layout, nxt, "running", "reading src/ledger before the rewrite", session=SESSION)

    if not (project.config / "baton" / "approval.key").is_file():
        raise BenchError(f"the approval key is not under {project.config}")
    job = Job(project.layout, setup_env, save=False)
    if job.next is None or job.next.id != nxt or job.waiting_for_approval() or job.snap.problems:
        raise BenchError(f"{project.state}: NEXT is {job.next.id if job.next else None}, want {nxt} approved "
                         f"(problems: {job.snap.problems})")
    figures.refresh(project.layout, job.plan)  # the job's figures, as its hooks keep them after normal use
    for other in others:
        made = subprocess.run([sys.executable, "-c", FIGURES_OF, str(other), str(project.root)], capture_output=True,
                              text=True, check=False)
        if made.returncode:
            raise BenchError(f"{other}: the job's figures: {made.stderr.strip()[-400:]}")
    project.next_id = nxt
    project.records = job.snap.seq
    project.ledger_bytes = ledger.stat().st_size
    return project


# ----------------------------------------------------------------------------- hooks.json


def matcher_hits(matcher: str, subject: str) -> bool:
    """Claude Code's matcher rule: a list of exact names, or else an unanchored regex search."""
    if matcher in ("", "*"):
        return True
    if re.fullmatch(r"[A-Za-z0-9_| ]+", matcher):
        return subject in [m.strip() for m in matcher.split("|")]
    return re.search(matcher, subject) is not None


def hook_command(event: str, subject: str, root: Path = REPO) -> Tuple[str, List[str], int]:
    """(command, args, timeout) of the one hooks.json entry that Claude Code runs for this call, for
    the plugin at ``root``."""
    data = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    found = []
    for group in data["hooks"].get(event, []):
        if not matcher_hits(str(group.get("matcher", "")), subject):
            continue
        for hook in group["hooks"]:
            rule = hook.get("if")
            if isinstance(rule, str) and rule.split("(", 1)[0] != subject:
                continue  # a permission-rule filter for another tool (e.g. Read(...))
            found.append(hook)
    if len(found) != 1 or found[0].get("type") != "command":
        raise BenchError(f"hooks.json: expected one command hook for {event} {subject!r}, found {len(found)}")
    hook = found[0]
    if "args" not in hook:
        raise BenchError(f"hooks.json: the {event} hook is in shell form; this benchmark runs exec form only")
    args = [str(a).replace(PLUGIN_ROOT, str(root)) for a in hook["args"]]
    return str(hook["command"]).replace(PLUGIN_ROOT, str(root)), args, int(hook.get("timeout", 600))


def launched(command: str, args: Sequence[str]) -> Tuple[str, List[str]]:
    """(the interpreter the launcher execs, its arguments after the name) when hooks.json starts the hook
    through a shell launcher (``sh -c SCRIPT CODE ARGS...`` whose script ends in ``exec python3 -S -c "$0"
    "$@" ...``); ``(command, args)`` when it names the interpreter itself."""
    if os.path.basename(command) not in ("sh", "bash", "dash") or len(args) < 3 or args[0] != "-c":
        return command, list(args)
    found = LAUNCHER_EXEC.search(args[1])
    if found is None:
        raise BenchError(f"hooks.json: a shell launcher this benchmark cannot read: {args[1]!r}")
    return found.group(1), ["-S", "-c", *args[2:]]


@dataclass(frozen=True)
class Interpreter:
    command: str  # as hooks.json names it
    on_path: str  # what PATH resolves it to
    real: str  # the interpreter actually measured

    @property
    def wrapped(self) -> bool:
        return self.on_path != self.real


def resolve_interpreter(command: str, env: Mapping[str, str], override: Optional[str]) -> Interpreter:
    """The executable ``command`` names on PATH. A wrapper script on PATH (a pyenv shim, say) is
    replaced by the interpreter it runs, so the figures are baton's and not the wrapper's; the
    wrapper's own cost is measured apart."""
    on_path = shutil.which(command, path=env.get("PATH")) or ""
    if override:
        return Interpreter(command, on_path or override, override)
    if not on_path:
        raise BenchError(f"{command} (the hooks' command) is not on PATH")
    with open(on_path, "rb") as handle:
        script = handle.read(2) == b"#!"
    if not script:
        return Interpreter(command, on_path, on_path)
    real = subprocess.run([on_path, "-S", "-c", "import sys; print(sys.executable)"], env=dict(env),
                          capture_output=True, text=True, check=False).stdout.strip()
    if not real:
        raise BenchError(f"{on_path} is a script and did not say which interpreter it runs")
    return Interpreter(command, on_path, real)


# ----------------------------------------------------------------------------- scenarios


def _json(out: bytes) -> Dict[str, Any]:
    try:
        data = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BenchError(f"stdout is not JSON: {out[:300]!r}") from None
    if not isinstance(data, dict):
        raise BenchError(f"stdout is not a JSON object: {out[:300]!r}")
    return data


def _counters(project: Project) -> Dict[str, Any]:
    try:
        data = json.loads(project.layout.counters.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _last_event(project: Project) -> Dict[str, Any]:
    """The last outcome in events.jsonl: an alert the call raised (once per condition, such as
    "25 tool calls since the last recorded step") may follow it."""
    for line in reversed(project.layout.events.read_bytes().splitlines()):
        event: Dict[str, Any] = json.loads(line)
        if event.get("kind") != "alert":
            return event
    return {}


def _want(condition: bool, problem: str) -> None:
    if not condition:
        raise BenchError(problem)


def expect_silence(out: bytes) -> None:
    _want(out.strip() == b"", f"expected no output (pass through), got {out[:300]!r}")


def expect_deny(out: bytes, words: str) -> None:
    spec = _json(out).get("hookSpecificOutput") or {}
    reason = str(spec.get("permissionDecisionReason", ""))
    _want(spec.get("permissionDecision") == "deny" and words in reason,
          f"expected a deny naming {words!r}, got {out[:400]!r}")


def expect_context_or_silence(out: bytes, event: str) -> None:
    if out.strip():
        spec = _json(out).get("hookSpecificOutput") or {}
        _want(spec.get("hookEventName") == event and bool(spec.get("additionalContext")),
              f"expected nothing or an alert, got {out[:300]!r}")


@dataclass
class Scenario:
    """One hook call: its payload, and the check that the run did what it should."""

    key: str
    label: str
    event: str
    subject: str  # what the matcher sees: the tool name, or SessionStart's source
    payload: Callable[[Project, str], Dict[str, Any]]
    check: Callable[[Project, bytes, Dict[str, Any]], None]  # (project, stdout, counters before)
    fresh_session: bool = False  # a new session (and transcript) for every run
    needs_shellscan: bool = False
    no_job: bool = False  # run in the project beside it that has no job
    root: Path = REPO  # the plugin the hook runs from (--baseline: another checkout)
    argv: List[str] = field(default_factory=list)
    timeout: int = 0


def base_payload(project: Project, event: str, session: str) -> Dict[str, Any]:
    data: Dict[str, Any] = {"session_id": session, "transcript_path": str(project.transcript(session)),
                            "cwd": str(project.root)}
    if event != "SessionStart":
        data.update(prompt_id=PROMPT_ID, permission_mode="default")
    if event in TOOL_EVENTS or event == "Stop":
        data["effort"] = {"level": "medium"}
    data["hook_event_name"] = event
    return data


def tool_payload(project: Project, event: str, session: str, tool: str, tool_input: Dict[str, Any],
                 **extra: Any) -> Dict[str, Any]:
    return {**base_payload(project, event, session), "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": "toolu_01HbenchXk3v9Qw2", **extra}


def write_input(project: Project, rel: str) -> Dict[str, Any]:
    return {"file_path": str(project.root / rel), "content": SOURCE}


READ_ONLY_BASH = 'grep -rn "def append" src/ledger tests | head -20 && wc -l src/ledger/*.py'
DENIED_BASH = "printf 'FSYNC = True\\n' >> src/server/settings.py && cat src/server/settings.py"
FAILING_BASH = "python3 -m pytest -q tests/test_ledger.py"
PYTEST_ERROR = ("Exit code 1\n....F....\n=== FAILURES ===\n___ test_torn_tail ___\n"
                "    assert tail.last['seq'] == 41\nE   AssertionError: assert 40 == 41\n"
                "FAILED tests/test_ledger.py::test_torn_tail - AssertionError: assert 40 == 41\n"
                "1 failed, 8 passed in 0.31s")


def _check_session_start(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    spec = _json(out).get("hookSpecificOutput") or {}
    text = str(spec.get("additionalContext", ""))
    _want(spec.get("hookEventName") == "SessionStart" and f"NEXT: {p.next_id}" in text and "PLAN:" in text,
          f"expected the brief in additionalContext, got {out[:300]!r}")


def _check_prompt(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    expect_context_or_silence(out, "UserPromptSubmit")  # the brief once per session, then nothing


def _check_brief(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    data = _json(out)
    _want(data.get("continue") is False and f"NEXT: {p.next_id}" in str(data.get("stopReason", "")),
          f"expected the brief as the prompt's stop reason, got {out[:300]!r}")


def _check_allow(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    expect_silence(out)


def _check_sandboxed(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    """A Bash call that passes comes back to run in baton's sandbox (or, where none runs, is let through):
    a line that sources the run's script (in .baton/run/, which starts bwrap) with the command verbatim."""
    if out.strip():
        spec = _json(out).get("hookSpecificOutput") or {}
        command = str((spec.get("updatedInput") or {}).get("command", ""))
        script = command[3:command.find("' 9<<'")] if command.startswith(". '") else ""
        try:
            launches = "--args 7" in Path(script).read_text(encoding="utf-8") if script else False
        except OSError:
            launches = False
        _want(spec.get("permissionDecision") in ("allow", "ask") and rewrite.original_of(command) == READ_ONLY_BASH
              and launches, f"expected the command back, sandboxed, got {out[:300]!r}")


def _check_deny(p: Project, out: bytes, _: Dict[str, Any]) -> None:
    expect_deny(out, f"step {p.next_id} may write only")


def _check_outcome(ok: bool, event: str) -> Callable[[Project, bytes, Dict[str, Any]], None]:
    def check(p: Project, out: bytes, before: Dict[str, Any]) -> None:
        expect_context_or_silence(out, event)
        after = _counters(p)
        _want(int(after.get("total_calls", 0)) == int(before.get("total_calls", 0)) + 1,
              f"counters.json total_calls did not grow by one ({before.get('total_calls')} -> "
              f"{after.get('total_calls')})")
        last = _last_event(p)
        _want(last.get("ok") is ok and last.get("step") == p.next_id,
              f"events.jsonl's last line is not this {event}: {last}")
    return check


def _check_stop(p: Project, out: bytes, before: Dict[str, Any]) -> None:
    spec = _json(out).get("hookSpecificOutput") or {}
    _want(spec.get("hookEventName") == "Stop" and f"NEXT: {p.next_id}" in str(spec.get("additionalContext", "")),
          f"expected the model sent back with NEXT, got {out[:300]!r}")
    _want(int(_counters(p).get("turns", 0)) == int(before.get("turns", 0)) + 1, "counters.json turns did not grow")


def _check_counted(p: Project, out: bytes, before: Dict[str, Any]) -> None:
    expect_silence(out)
    _want(int(_counters(p).get("external_ops", 0)) == int(before.get("external_ops", 0)) + 1,
          "counters.json external_ops did not grow by one")


def _check_checked(p: Project, out: bytes, before: Dict[str, Any]) -> None:
    _check_outcome(True, "PostToolUse")(p, out, before)
    _want("checks" not in _counters(p) or not _counters(p)["checks"], "the checked file was recorded as failing")


def rule_scenarios() -> List[Scenario]:
    """The calls the invariant rules judge (``--rules``)."""
    writer = "src/ledger/writer.py"
    return [
        Scenario("pre-bash-push", "PreToolUse Bash push to main (rule)", "PreToolUse", "Bash",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Bash", {"command": "git push origin HEAD:main",
                                                                        "description": "Push"}),
                 lambda p, out, _: expect_deny(out, "main-reviewed"), needs_shellscan=True),
        Scenario("pre-bash-curl", "PreToolUse Bash curl (allowed, counted)", "PreToolUse", "Bash",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Bash",
                                           {"command": "curl -s https://api.github.com/repos/o/r | jq .name",
                                            "description": "Repo name"}),
                 _check_counted, needs_shellscan=True),
        Scenario("post-write-check", "PostToolUse Write (checked)", "PostToolUse", "Write",
                 lambda p, s: tool_payload(p, "PostToolUse", s, "Write", write_input(p, writer),
                                           tool_response={"type": "update", "filePath": str(p.root / writer),
                                                          "content": SOURCE}, duration_ms=9),
                 _check_checked),
    ]


def scenarios() -> List[Scenario]:
    extra = rule_scenarios() if RULES["on"] else []
    return extra + [
        Scenario("pre-webfetch", "PreToolUse WebFetch", "PreToolUse", "WebFetch",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "WebFetch",
                                           {"url": "https://api.github.com/repos/o/r", "prompt": "the name"}),
                 _check_counted if RULES["on"] else _check_allow),
        Scenario("pre-mcp", "PreToolUse MCP tool", "PreToolUse", "mcp__github__get_issue",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "mcp__github__get_issue", {"number": 7}),
                 _check_counted if RULES["on"] else _check_allow),
        Scenario("session-start", "SessionStart (startup)", "SessionStart", "startup",
                 lambda p, s: {**base_payload(p, "SessionStart", s), "source": "startup"}, _check_session_start),
        Scenario("prompt", "UserPromptSubmit (a prompt)", "UserPromptSubmit", "",
                 lambda p, s: {**base_payload(p, "UserPromptSubmit", s),
                               "prompt": "carry on with the ledger writer; keep the tests green"}, _check_prompt),
        Scenario("prompt-brief", "UserPromptSubmit /baton:brief", "UserPromptSubmit", "",
                 lambda p, s: {**base_payload(p, "UserPromptSubmit", s), "prompt": "/baton:brief"}, _check_brief),
        Scenario("pre-write-allow", "PreToolUse Write (allowed)", "PreToolUse", "Write",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Write", write_input(p, "src/ledger/writer.py")),
                 _check_allow),
        Scenario("pre-write-deny", "PreToolUse Write (denied)", "PreToolUse", "Write",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Write", write_input(p, "src/server/app.py")),
                 _check_deny),
        Scenario("pre-bash-read", "PreToolUse Bash (read-only)", "PreToolUse", "Bash",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Bash",
                                           {"command": READ_ONLY_BASH, "description": "Find append in the ledger"}),
                 _check_sandboxed, needs_shellscan=True),
        Scenario("pre-bash-deny", "PreToolUse Bash (write, denied)", "PreToolUse", "Bash",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Bash",
                                           {"command": DENIED_BASH, "description": "Turn fsync on"}),
                 _check_deny, needs_shellscan=True),
        Scenario("post-write", "PostToolUse Write", "PostToolUse", "Write",
                 lambda p, s: tool_payload(
                     p, "PostToolUse", s, "Write", write_input(p, "src/ledger/writer.py"),
                     tool_response={"type": "update", "filePath": str(p.root / "src/ledger/writer.py"),
                                    "content": SOURCE, "structuredPatch": [{"oldStart": 1, "oldLines": 1,
                                                                           "newStart": 1, "newLines": 1,
                                                                           "lines": ["-x", "+y"]}],
                                    "originalFile": SOURCE, "userModified": False}, duration_ms=9),
                 _check_outcome(True, "PostToolUse")),
        Scenario("post-failure", "PostToolUseFailure Bash", "PostToolUseFailure", "Bash",
                 lambda p, s: tool_payload(p, "PostToolUseFailure", s, "Bash",
                                           {"command": FAILING_BASH, "description": "Run the ledger tests"},
                                           error=PYTEST_ERROR, is_interrupt=False, duration_ms=812),
                 _check_outcome(False, "PostToolUseFailure")),
        Scenario("stop", "Stop", "Stop", "",
                 lambda p, s: {**base_payload(p, "Stop", s), "stop_hook_active": False,
                               "last_assistant_message": "The writer appends and seals; two tests still fail.",
                               "background_tasks": [], "session_crons": []},
                 _check_stop, fresh_session=True),
    ] + no_job_scenarios()


def no_job_scenarios() -> List[Scenario]:
    """The same calls in a project without a job: each hook must answer with almost nothing loaded."""
    silent = lambda p, out, _: expect_silence(out)  # noqa: E731
    return [
        Scenario("nojob-session-start", "no job: SessionStart", "SessionStart", "startup",
                 lambda p, s: {**base_payload(p, "SessionStart", s), "source": "startup"}, silent, no_job=True),
        Scenario("nojob-prompt", "no job: UserPromptSubmit", "UserPromptSubmit", "",
                 lambda p, s: {**base_payload(p, "UserPromptSubmit", s), "prompt": "add a health check endpoint"},
                 silent, no_job=True),
        Scenario("nojob-pre-write", "no job: PreToolUse Write", "PreToolUse", "Write",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Write", write_input(p, "src/ledger/writer.py")),
                 silent, no_job=True),
        Scenario("nojob-pre-webfetch", "no job: PreToolUse WebFetch", "PreToolUse", "WebFetch",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "WebFetch",
                                           {"url": "https://api.github.com/repos/o/r", "prompt": "the name"}),
                 silent, no_job=True),
        Scenario("nojob-pre-bash", "no job: PreToolUse Bash", "PreToolUse", "Bash",
                 lambda p, s: tool_payload(p, "PreToolUse", s, "Bash",
                                           {"command": READ_ONLY_BASH, "description": "Find append in the ledger"}),
                 silent, needs_shellscan=True, no_job=True),
        Scenario("nojob-post-write", "no job: PostToolUse Write", "PostToolUse", "Write",
                 lambda p, s: tool_payload(p, "PostToolUse", s, "Write", write_input(p, "src/app.py"),
                                           tool_response={"type": "create", "filePath": str(p.root / "src/app.py"),
                                                          "content": SOURCE}, duration_ms=9),
                 silent, no_job=True),
        Scenario("nojob-stop", "no job: Stop", "Stop", "",
                 lambda p, s: {**base_payload(p, "Stop", s), "stop_hook_active": False,
                               "last_assistant_message": "Done.", "background_tasks": [], "session_crons": []},
                 silent, no_job=True),
    ]


# ----------------------------------------------------------------------------- measuring


def hook_env(base: Mapping[str, str], project: Project, event: str, session: str,
             root: Path = REPO) -> Dict[str, str]:
    """The environment Claude Code 2.1.328 gives a hook process: its own, plus the project, plugin and session."""
    env = {**base, "CLAUDE_PROJECT_DIR": str(project.root), "CLAUDE_PLUGIN_ROOT": str(root),
           "CLAUDE_PLUGIN_DATA": str(project.data), "CLAUDE_CODE_SESSION_ID": session,
           "XDG_CONFIG_HOME": str(project.config)}
    if event in TOOL_EVENTS or event == "Stop":
        env["CLAUDE_EFFORT"] = "medium"
    if event == "SessionStart":
        env["CLAUDE_ENV_FILE"] = str(project.data / "session-env" / session / "sessionstart-hook-0.sh")
    return env


class Runner:
    """Runs the scenarios and the bare interpreters against one project, checking every run."""

    def __init__(self, project: Project, base_env: Mapping[str, str], interpreter: Interpreter, work: Path,
                 items: Sequence[Scenario]) -> None:
        self.project, self.base_env, self.interpreter = project, base_env, interpreter
        self.items = list(items)
        self.inputs = work / f"stdin-{project.size}"
        self.inputs.mkdir()
        self.count = 0
        self.template = transcript_text(SESSION)
        self.project.transcript(SESSION).write_text(self.template, encoding="utf-8")

    def _stdin(self, scenario: Scenario, session: str) -> Path:
        path = self.inputs / f"{scenario.key}-{session}.json"
        where = dataclasses.replace(self.project, root=self.project.empty) if scenario.no_job else self.project
        if not path.exists():
            path.write_text(json.dumps(scenario.payload(where, session)), encoding="utf-8")
        return path

    def _clean(self) -> None:
        for folder in (self.project.state, self.project.data):
            for name in ("errors.log", "degraded.json"):
                if (folder / name).exists():
                    text = (folder / name).read_text(encoding="utf-8", errors="replace")[-600:]
                    raise BenchError(f"a hook logged a failure in {folder / name}: {text}")

    def hook(self, scenario: Scenario) -> Run:
        self.count += 1
        session = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-stop-{self.count}")) if scenario.fresh_session \
            else SESSION
        if scenario.fresh_session:  # a new session's transcript, as Claude Code writes it
            self.project.transcript(session).write_text(self.template, encoding="utf-8")
        where = dataclasses.replace(self.project, root=self.project.empty) if scenario.no_job else self.project
        stdin = self._stdin(scenario, session)
        before = _counters(self.project)
        ledger_before = self.project.layout.ledger.stat().st_size
        env = hook_env(self.base_env, where, scenario.event, session, scenario.root)
        run, out, err = launch(scenario.argv, where.root, env, stdin)
        try:
            _want(err.strip() == "", f"stderr: {err.strip()[:400]}")
            scenario.check(where, out, before)
            self._clean()
            _want(self.project.layout.ledger.stat().st_size == ledger_before, "the ledger changed")
            _want(not scenario.no_job or not where.state.exists(), "a hook made .baton/ in a project without a job")
        except BenchError as exc:
            raise BenchError(f"{self.project.size:,} records, {scenario.label}: {exc}") from None
        if scenario.fresh_session:
            self.project.transcript(session).unlink()
            stdin.unlink()
        self._end_runs()
        return run

    def _end_runs(self) -> None:
        """Untimed: a sandboxed Bash call allowed here is over, as its PostToolUse leaves it in Claude Code
        (until then it counts as running, and a Write would be refused as racing it)."""
        state = str(self.project.layout.state_dir)
        for run in runs.records(state):
            if run.get("work"):
                scratch.release(str(run["work"]))
            runs.finish(state, str(run.get("id")))

    def bare(self, key: str, argv: Sequence[str]) -> Run:
        if key not in (MINIMAL, MINIMAL_DIRECT):
            env = hook_env(self.base_env, self.project, "SessionStart", SESSION)
            return launch(argv, self.project.root, env)[0]
        scenario = next(s for s in [*self.items, *scenarios()] if s.key == MINIMAL_PAYLOAD)  # --only may omit it
        env = hook_env(self.base_env, self.project, scenario.event, SESSION)
        run, out, err = launch(argv, self.project.root, env, self._stdin(scenario, SESSION))
        _want(out == b"{}\n" and err == "", f"the minimal hook printed {out[:200]!r}, stderr {err[:200]!r}")
        return run


@dataclass
class SizeResult:
    project: Project
    figures: Dict[str, Figure] = field(default_factory=dict)  # scenario key or bare key -> runs

    def overhead(self, key: str, bare: str) -> float:
        return self.figures[key].median - self.figures[bare].median

    def cpu_overhead(self, key: str, bare: str) -> float:
        return cpu_median(self.figures[key]) - cpu_median(self.figures[bare])

    def ratio(self, key: str) -> float:
        """The hook's median wall time over the minimal hook's (the target's measure)."""
        return self.figures[key].median / self.figures[MINIMAL].median

    def cpu_ratio(self, key: str) -> float:
        return cpu_median(self.figures[key]) / cpu_median(self.figures[MINIMAL])

    def as_json(self, items: Sequence[Scenario]) -> Dict[str, Any]:
        p = self.project
        hooks = {s.key: {"label": s.label, "event": s.event, **figure_json(self.figures[s.key]),
                         "overhead_ms": self.overhead(s.key, "bare-site") * 1000,
                         "overhead_nosite_ms": self.overhead(s.key, "bare-nosite") * 1000,
                         "cpu_overhead_ms": self.cpu_overhead(s.key, "bare-site") * 1000,
                         "cpu_overhead_nosite_ms": self.cpu_overhead(s.key, "bare-nosite") * 1000,
                         "ratio_to_minimal": self.ratio(s.key), "cpu_ratio_to_minimal": self.cpu_ratio(s.key),
                         "meets_target": self.ratio(s.key) <= TARGET_RATIO,
                         "meets_target_cpu": self.cpu_ratio(s.key) <= TARGET_RATIO,
                         "meets_15ms_bar": self.overhead(s.key, "bare-site") * 1000 < TARGET_MS}
                 for s in items if s.key in self.figures}
        return {"records": p.records, "ledger_bytes": p.ledger_bytes, "ledger_build_seconds": p.build_seconds,
                "snapshot_build_seconds": p.snapshot_seconds, "next_step": p.next_id,
                "bare": {k: figure_json(self.figures[k]) for k, _, _ in BARE}, "hooks": hooks}


def measure_size(size: int, runs: int, work: Path, base_env: Mapping[str, str], interpreter: Interpreter,
                 items: Sequence[Scenario], ids: Sequence[str]) -> SizeResult:
    project = build_project(work, size, ids, dict(base_env), sorted({s.root for s in items} - {REPO}))
    runner = Runner(project, base_env, interpreter, work, items)
    result = SizeResult(project, {key: Figure() for key, _, _ in BARE})
    result.figures.update({s.key: Figure() for s in items})
    progress(f"{size:,} records: warm-up (one untimed run of each)")
    for s in items:
        runner.hook(s)
    for key, _, argv in BARE:
        runner.bare(key, argv)
    jobs: List[Tuple[str, Callable[[], Run]]] = [(key, functools.partial(runner.bare, key, argv))
                                                 for key, _, argv in BARE]
    jobs += [(s.key, functools.partial(runner.hook, s)) for s in items]
    progress(f"{size:,} records: {runs} rounds of {len(jobs)} commands")
    for r in range(runs):  # interleaved and rotated, so a noisy moment is shared out
        shift = r % len(jobs)
        for key, job in jobs[shift:] + jobs[:shift]:
            result.figures[key].runs.append(job())
    shutil.rmtree(project.root.parent, ignore_errors=True)
    return result


# ----------------------------------------------------------------------------- reporting


def cpu_median(figure: Figure) -> float:
    return statistics.median(r.cpu_seconds for r in figure.runs)


def figure_json(figure: Figure) -> Dict[str, Any]:
    return {**figure.as_json(), "cpu_seconds": [r.cpu_seconds for r in figure.runs],
            "median_cpu_seconds": cpu_median(figure)}


def verdict(overhead_ms: float) -> str:
    return "ok" if overhead_ms < TARGET_MS else "OVER TARGET"


def ratio_verdict(ratio: float, cpu_ratio: float) -> str:
    """``ok`` when both the wall and the CPU ratio are within the target; which one is over, else. On
    an idle machine a hook's wall time is its CPU time, so the CPU ratio stands for it on a busy one."""
    over = [name for name, value in (("wall", ratio), ("CPU", cpu_ratio)) if value > TARGET_RATIO]
    return "ok" if not over else f"OVER {TARGET_RATIO:g}x" + ("" if len(over) == 2 else f" ({over[0]})")


def iqr(figure: Figure) -> float:
    """The interquartile range of the wall times: the noise around the median."""
    if len(figure.runs) < 2:
        return 0.0
    q = statistics.quantiles([r.seconds for r in figure.runs], n=4)
    return q[2] - q[0]


def signed(seconds: float) -> str:
    return f"{seconds * 1000:+,.1f}"


def render_rows(rows: Sequence[Tuple[str, ...]], left: Sequence[int]) -> List[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def table(meta: Dict[str, Any], results: Sequence[SizeResult], items: Sequence[Scenario],
          wrapper: Optional[Figure]) -> str:
    m, interp = meta["machine"], meta["interpreter"]
    lines = [
        "baton hook benchmark",
        f"machine : {m['cpu']}, nproc {m['nproc']}, {m['system']}",
        f"python  : {m['python']}; the hooks' `{interp['command']}` -> {interp['on_path']}",
        f"measured: {interp['real']}" + (" (PATH holds a wrapper script; its cost is shown apart below)"
                                         if interp["on_path"] != interp["real"] else ""),
        f"started : {interp['started']}",
        f"baton   : {meta['revision']}" + (f"; rows marked [baseline]: {meta['baseline']}"
                                               if meta.get("baseline") else ""),
        f"runs    : {meta['runs']} per figure after one warm-up; wall time of each hook process, fork to exit",
        "note    : a shared VM is noisy: compare medians, and rows of one run with each other",
        f"target  : each hook within {TARGET_RATIO:g}x of the minimal Python hook (parse stdin JSON, print {{}}), "
        "started the same way, at every ledger size",
    ]
    if meta.get("skipped"):
        lines.append(f"skipped : {', '.join(meta['skipped'])} (store/shell/scan.py is not there yet)")
    lines.append("")
    header = ("records", "command", "median ms", "min ms", "max ms", "IQR ms", "CPU ms", "x minimal",
              "CPU x minimal", "over -S -c pass", "RSS MB", "out B", "verdict")
    rows: List[Tuple[str, ...]] = [header]
    for r in results:
        first = True
        for key, label, _ in BARE:
            f = r.figures[key]
            minimal = key in (MINIMAL, MINIMAL_DIRECT)
            ratios = (f"{r.ratio(key):.2f}", f"{r.cpu_ratio(key):.2f}") if minimal else ("", "")
            rows.append((f"{r.project.records:,}" if first else "", label, ms(f.median), ms(f.low), ms(f.high),
                         ms(iqr(f)), ms(cpu_median(f)), *ratios, "", mb(f.rss_kb), "",
                         "reference" if key == MINIMAL else ""))
            first = False
        for s in items:
            if s.key not in r.figures:
                continue
            f = r.figures[s.key]
            rows.append(("", s.label, ms(f.median), ms(f.low), ms(f.high), ms(iqr(f)), ms(cpu_median(f)),
                         f"{r.ratio(s.key):.2f}", f"{r.cpu_ratio(s.key):.2f}",
                         signed(r.overhead(s.key, "bare-nosite")), mb(f.rss_kb), str(f.out_bytes),
                         ratio_verdict(r.ratio(s.key), r.cpu_ratio(s.key))))
    lines += render_rows(rows, (0, 1, 12))
    lines += ["", "x minimal = hook median / the minimal Python hook's median (the target's measure); CPU x minimal = "
              "the same with median user + system",
              "time, less disturbed than wall time when the machine is busy. IQR = interquartile range of the wall "
              "times (the noise).",
              "over -S -c pass = hook median - `python3 -S -c pass` median: what baton's own code costs (hooks run "
              "with -S). out B = bytes on stdout.",
              "Ledgers: " + "; ".join(f"{r.project.records:,} records, {r.project.ledger_bytes / 1e6:,.1f} MB "
                                      f"(written in {r.project.build_seconds:.1f} s, state.json built once in "
                                      f"{r.project.snapshot_seconds:.1f} s)" for r in results) + "."]
    if results:
        site = [r.figures["bare-site"].median - r.figures["bare-nosite"].median for r in results]
        lines.append(f"site-packages start-up on this interpreter (-c pass minus -S -c pass): "
                     f"{', '.join(ms(x) for x in site)} ms.")
    if results and MINIMAL_DIRECT in results[0].figures:
        lines.append("the launcher (/bin/sh, cd /, exec python3), the minimal hook through it minus started directly: "
                     + "; ".join(f"{signed(r.overhead(MINIMAL, MINIMAL_DIRECT))} ms wall, "
                                 f"{signed(r.cpu_overhead(MINIMAL, MINIMAL_DIRECT))} ms CPU" for r in results) + ".")
    if wrapper is not None:
        lines.append(f"{interp['on_path']} -S -c pass (the wrapper on PATH that Claude Code would start): median "
                     f"{ms(wrapper.median)} ms (min {ms(wrapper.low)}, max {ms(wrapper.high)}); every hook pays it.")
    lines += ["", f"verdict per hook, worst ledger size (target: within {TARGET_RATIO:g}x of the minimal hook; the "
              f"older bar: under {TARGET_MS:g} ms over `python3 -c pass`):"]
    lines += ["  " + line for line in render_rows(summary_rows(results, items), (0, 3, 6))]
    return "\n".join(lines)


def summary_rows(results: Sequence[SizeResult], items: Sequence[Scenario]) -> List[Tuple[str, ...]]:
    rows: List[Tuple[str, ...]] = [("hook", "worst x minimal", "worst CPU x minimal", "verdict",
                                    "worst over -c pass", "worst over -S -c pass", f"{TARGET_MS:g} ms bar")]
    for s in items:
        present = [r for r in results if s.key in r.figures]
        if not present:
            continue
        ratio = max(r.ratio(s.key) for r in present)
        cpu = max(r.cpu_ratio(s.key) for r in present)
        worst = max(r.overhead(s.key, "bare-site") for r in present)
        worst_s = max(r.overhead(s.key, "bare-nosite") for r in present)
        rows.append((s.label, f"{ratio:.2f}x", f"{cpu:.2f}x", ratio_verdict(ratio, cpu), f"{signed(worst)} ms",
                     f"{signed(worst_s)} ms", verdict(worst * 1000)))
    return rows


# ----------------------------------------------------------------------------- main


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=parse_sizes, help="ledger sizes in records, comma separated "
                        "(default 1000,1000000; --quick: 1000,100000)")
    parser.add_argument("--runs", type=int,
                        help=f"timed runs per figure (default {DEFAULT_RUNS}; --quick: {QUICK_RUNS})")
    parser.add_argument("--quick", action="store_true", help="a smaller large ledger and fewer runs")
    parser.add_argument("--python", help="interpreter to run the hooks with (default: what `python3`, "
                        "hooks.json's command, resolves to on PATH)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON instead of the table")
    parser.add_argument("--baseline", type=Path, help="another baton checkout (e.g. `git worktree add DIR main`) "
                        "whose hooks run beside this one's, interleaved, as the rows marked [baseline]")
    parser.add_argument("--rules", action="store_true", help="add the plan's invariant rules and the calls they "
                        "judge (the project becomes a git checkout)")
    parser.add_argument("--direct", action="store_true", help="start python3 on each hook's code "
                        "directly, not through hooks.json's /bin/sh launcher (beside a run without it: what the "
                        "launcher costs)")
    parser.add_argument("--only", help="comma-separated scenario keys to time (e.g. pre-bash-read,stop); the "
                        "references always run")
    args = parser.parse_args(argv)
    RULES["on"] = bool(args.rules)
    sizes: List[int] = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    runs: int = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS)
    if runs < 1:
        parser.error("--runs must be at least 1")
    if sizes[0] < MIN_SIZE:
        parser.error(f"sizes must be at least {MIN_SIZE} records")

    work = Path(tempfile.mkdtemp(prefix="baton-bench-hooks-", dir="/tmp")).resolve()
    base_env = {k: v for k, v in os.environ.items() if k not in DROP_ENV}
    base_env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")  # bytecode cached, but not in the work tree
    os.environ["BATON_FSYNC"] = "0"  # only for building the ledgers in this process
    items = scenarios()
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {s.key for s in items}
        if unknown:
            parser.error(f"--only: no scenario {', '.join(sorted(unknown))}; known: "
                         f"{', '.join(s.key for s in items)}")
        items = [s for s in items if s.key in wanted]
    skipped = []
    if not SHELLSCAN.exists():
        skipped = [s.label for s in items if s.needs_shellscan]
        items = [s for s in items if not s.needs_shellscan]
    meta: Dict[str, Any] = {"machine": machine(), "revision": revision(), "runs": runs, "sizes": sizes,
                            "target_ratio": TARGET_RATIO, "target_ms": TARGET_MS, "skipped": skipped}
    if args.baseline is not None:
        baseline = args.baseline.resolve()
        if not (baseline / "hooks" / "hooks.json").is_file():
            parser.error(f"--baseline {baseline}: no hooks/hooks.json there")
        meta["baseline"] = f"{baseline} ({revision(baseline)})"
        items = [twin for s in items for twin in (s, dataclasses.replace(
            s, key=f"baseline-{s.key}", label=f"{s.label} [baseline]", root=baseline))]
    try:
        interpreter: Optional[Interpreter] = None
        launcher: Optional[Tuple[str, str]] = None  # (shell, its script) when hooks.json starts a launcher
        for s in items:
            command, hook_args, timeout = hook_command(s.event, s.subject, s.root)
            python, direct = launched(command, hook_args)
            if interpreter is None:
                interpreter = resolve_interpreter(python, base_env, args.python)
                if interpreter.wrapped or args.python:  # the launcher's `exec python3` finds the measured one first
                    shims = work / "bin"
                    shims.mkdir()
                    (shims / os.path.basename(python)).symlink_to(interpreter.real)
                    base_env["PATH"] = f"{shims}{os.pathsep}{base_env.get('PATH', os.defpath)}"
            elif python != interpreter.command:
                raise BenchError(f"hooks.json: {s.event} runs {python}, not {interpreter.command}")
            if python != command:
                launcher = (command, hook_args[1])
            s.argv = [interpreter.real, *direct] if args.direct or python == command else [command, *hook_args]
            s.timeout = timeout
        assert interpreter is not None
        minimal = ["-S", "-c", MINIMAL_HOOK, str(REPO), "PreToolUse"]
        BARE[:] = [("bare-site", "python3 -c pass", [interpreter.real, "-c", "pass"]),
                   ("bare-nosite", "python3 -S -c pass", [interpreter.real, "-S", "-c", "pass"])]
        if launcher is None or args.direct:
            BARE.append((MINIMAL, "minimal Python hook", [interpreter.real, *minimal]))
        else:
            BARE.append((MINIMAL, "minimal Python hook, through the launcher",
                         [launcher[0], "-c", launcher[1], *minimal[2:]]))
            BARE.append((MINIMAL_DIRECT, "minimal Python hook, python3 started directly", [interpreter.real, *minimal]))
        started = (f"python3 directly (--direct; hooks.json starts {launcher[0]} -c '{launcher[1]}' first)"
                   if launcher and args.direct else
                   f"as hooks.json says: {launcher[0]} -c '{launcher[1]}' <bootstrap> <root> <event>"
                   if launcher else "as hooks.json says: the interpreter itself")
        meta["interpreter"] = {"command": interpreter.command,
                               "on_path": interpreter.on_path, "real": interpreter.real, "started": started,
                               "direct": bool(args.direct or launcher is None)}
        wrapper: Optional[Figure] = None
        if interpreter.wrapped:
            progress(f"{runs} x {interpreter.on_path} -S -c pass (the wrapper on PATH)")
            wrapper = Figure([launch([interpreter.on_path, "-S", "-c", "pass"], work, base_env)[0]
                              for _ in range(runs)])
        ids = plan_ids()
        results = [measure_size(size, runs, work, base_env, interpreter, items, ids) for size in sizes]
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    slow = [f"{s.label} at {r.project.records:,}" for r in results for s in items
            if r.figures[s.key].high > s.timeout]
    if slow:
        meta["over_hook_timeout"] = slow
    if args.json:
        data = {**meta, "wrapper": wrapper.as_json() if wrapper else None,
                "results": [r.as_json(items) for r in results]}
        print(json.dumps(data, indent=2))
    else:
        print(table(meta, results, items, wrapper))
    return 0


if __name__ == "__main__":
    sys.exit(main())
