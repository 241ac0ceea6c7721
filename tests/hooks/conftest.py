"""Fixtures for the hook tests: a job in the sandbox project, a plugin copy, a hook runner.

``hook`` is parametrised: every test that uses it runs once in-process and once as a subprocess
started from hooks.json in a copy of the plugin (``relay-copy``). Both modes assert exit code 0, a
documented answer (or none) and, unless a test says otherwise, an empty stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Union

import gatemodes
import hookkit
import pytest

from store.monitor import outcomes
from store.state import journal
from store.state.location import Layout

REPO = Path(__file__).resolve().parents[2]
PLUGIN_PARTS = (".claude-plugin", "hooks", "store", "bin", "commands")


def copy_plugin(dest: Path) -> Path:
    """The plugin's run-time parts copied under ``dest/relay-copy``; returns that folder."""
    root = dest / "relay-copy"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in PLUGIN_PARTS:
        shutil.copytree(REPO / part, root / part, ignore=ignore)
    return root


@pytest.fixture(scope="session")
def plugin_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_plugin(tmp_path_factory.mktemp("plugin"))


@pytest.fixture(scope="session")
def python_shim(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder whose ``python3`` is this interpreter, put first on PATH so that hooks.json's
    ``python3`` is the Python under test (3.9 when the suite runs under 3.9)."""
    folder = tmp_path_factory.mktemp("shim")
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


class JobDir:
    """The sandbox project and its ``.baton`` state, with helpers to set a job up."""

    def __init__(self, project: Path, home: Path) -> None:
        self.project, self.home = project, home
        self.layout = Layout(project / ".baton", project)

    @property
    def state(self) -> Path:
        return self.layout.root

    def plan(self, plan: Union[Mapping[str, Any], List[str], str]) -> JobDir:
        """Write ``.baton/plan.json``: a dict as JSON, a list as the seed form, a string as-is."""
        self.state.mkdir(exist_ok=True)
        if isinstance(plan, list):
            plan = {"steps": plan}
        text = plan if isinstance(plan, str) else json.dumps(plan)
        self.layout.plan.write_text(text, encoding="utf-8")
        return self

    def record(self, step: str, status: str, note: str = "", **extra: Any) -> Dict[str, Any]:
        return journal.append(self.layout, step, status, note, **extra)

    def ledger(self) -> List[Dict[str, Any]]:
        if not self.layout.ledger.exists():
            return []
        return [json.loads(line) for line in self.layout.ledger.read_text().splitlines() if line.strip()]

    def events(self) -> List[Dict[str, Any]]:
        if not self.layout.events.exists():
            return []
        return [json.loads(line) for line in self.layout.events.read_text().splitlines()]

    def counters(self) -> Dict[str, Any]:
        return outcomes.read_counters(self.layout)

    def path(self, rel: str) -> str:
        return str(self.project / rel)


@pytest.fixture
def job(sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> JobDir:
    """The sandbox project as the session's project (``CLAUDE_PROJECT_DIR``), no plan yet."""
    monkeypatch.setenv("BATON_FSYNC", "0")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(sandbox.project))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", hookkit.SESSION)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(sandbox.home / ".claude" / "plugins" / "data" / "baton-inline"))
    return JobDir(sandbox.project, sandbox.home)


Hook = Callable[..., hookkit.Result]


def _session_of(payload: Union[hookkit.Payload, bytes, str]) -> str:
    """The payload's session id, as Claude Code also puts it in the environment (when it can be)."""
    sid = payload.get("session_id") if isinstance(payload, dict) else None
    return sid if isinstance(sid, str) and "\x00" not in sid and len(sid) < 1000 else hookkit.SESSION


def make_subprocess_runner(root: Path, job: JobDir, shim: str) -> Hook:
    data = job.home / ".claude" / "plugins" / "data" / "baton-inline"

    def run(event: str, payload: Union[hookkit.Payload, bytes, str], stderr_ok: bool = False,
            env: Optional[Mapping[str, str]] = None) -> hookkit.Result:
        as_dict = payload if isinstance(payload, dict) else {}
        entries = hookkit.commands_for(root / "hooks" / "hooks.json", event, as_dict, str(job.home))
        if isinstance(payload, dict) and event in hookkit.TOOL_EVENTS and not entries:
            return hookkit.Result(0, "", "", None)  # Claude Code starts no hook for this tool
        assert entries, f"hooks.json runs nothing for {event}"
        data.mkdir(parents=True, exist_ok=True)
        full_env = hookkit.hook_env(env or os.environ, job.project, root, data, _session_of(payload), shim)
        results = []
        for entry in entries:
            raw = hookkit.launch(entry, root, hookkit.encode(payload), full_env, job.project)
            assert raw.code == 0, raw
            if not stderr_ok:
                assert raw.err == "", raw.err
            results.append(hookkit.Result(raw.code, raw.out, raw.err, hookkit.check_output(event, raw.out, payload)))
        return next((r for r in results if r.answer is not None), results[0])

    return run


def make_in_process_runner(monkeypatch: pytest.MonkeyPatch) -> Hook:
    def run(event: str, payload: Union[hookkit.Payload, bytes, str], stderr_ok: bool = False,
            env: Optional[Mapping[str, str]] = None) -> hookkit.Result:
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", _session_of(payload))
        return hookkit.run_in_process(event, payload)

    return run


@pytest.fixture(params=["in-process", "in-process-fallback", "subprocess"])
def hook(request: pytest.FixtureRequest, job: JobDir, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hook]:
    """Run a hook: ``hook("PreToolUse", payload)``: in this process and as a subprocess from hooks.json,
    with baton's sandbox, and in this process again where no sandbox can run (the gate's fallback).
    ``hook.sandboxed`` tells which gate mode a test runs in."""
    mode = "fallback" if request.param.endswith("fallback") else "sandboxed"
    gatemodes.set_mode(mode, job.home)
    if request.param.startswith("in-process"):
        runner = make_in_process_runner(monkeypatch)
    else:
        root = request.getfixturevalue("plugin_root")
        shim = request.getfixturevalue("python_shim")
        runner = make_subprocess_runner(root, job, shim)
    runner.sandboxed = mode == "sandboxed"  # type: ignore[attr-defined]
    yield runner


@pytest.fixture
def inproc(job: JobDir, monkeypatch: pytest.MonkeyPatch) -> Hook:
    """The in-process runner alone, for tests with many calls (property tests, counters), with the
    sandbox (``inproc_fallback``: without)."""
    gatemodes.set_mode("sandboxed", job.home)
    runner = make_in_process_runner(monkeypatch)
    runner.sandboxed = True  # type: ignore[attr-defined]
    return runner


@pytest.fixture(params=gatemodes.MODES)
def inproc_modes(request: pytest.FixtureRequest, job: JobDir, monkeypatch: pytest.MonkeyPatch) -> Hook:
    """The in-process runner once with the sandbox and once in the fallback (``.sandboxed`` says which)."""
    gatemodes.set_mode(request.param, job.home)
    runner = make_in_process_runner(monkeypatch)
    runner.sandboxed = request.param == "sandboxed"  # type: ignore[attr-defined]
    return runner


@pytest.fixture
def inproc_fallback(job: JobDir, monkeypatch: pytest.MonkeyPatch) -> Hook:
    gatemodes.set_mode("fallback", job.home)
    runner = make_in_process_runner(monkeypatch)
    runner.sandboxed = False  # type: ignore[attr-defined]
    return runner


@pytest.fixture
def subproc(job: JobDir, plugin_root: Path, python_shim: str) -> Hook:
    return make_subprocess_runner(plugin_root, job, python_shim)


Payloads = Callable[..., hookkit.Payload]


@pytest.fixture
def payload(job: JobDir) -> Payloads:
    """``payload("pre_tool_use_write", tool_input={...})``: a fixture made real for this project."""

    def build(name: str, **changes: Any) -> hookkit.Payload:
        return hookkit.load(name, job.project, job.home, **changes)

    return build
