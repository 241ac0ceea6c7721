"""A broken install: hooks.json still runs, but baton's files are gone or damaged. The gate must
deny (saying to reinstall) only while a job is active; everything else stays silent; the exit
code is always 0, never 2 (which Claude Code would treat as "block every matched call")."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List

import hookkit
import pytest
from conftest import REPO, JobDir, Payloads, copy_plugin

Damage = Callable[[Path], None]


def remove(rel: str) -> Damage:
    def apply(root: Path) -> None:
        target = root / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()

    return apply


def garble(rel: str) -> Damage:
    def apply(root: Path) -> None:
        (root / rel).write_text("def broken(:\n")

    return apply


DAMAGE: Dict[str, Damage] = {
    "hooks/adapter.py deleted": remove("hooks/adapter.py"),
    "hooks/ deleted": remove("hooks"),
    "hooks/pre_tool_use.py deleted": remove("hooks/pre_tool_use.py"),
    "store/ deleted": remove("store"),
    "hooks/adapter.py garbled": garble("hooks/adapter.py"),
    "hooks/pre_tool_use.py garbled": garble("hooks/pre_tool_use.py"),
}
# damage that leaves no hook able to work (the others break the gate alone)
BREAKS_ALL = ["hooks/adapter.py deleted", "hooks/ deleted", "store/ deleted", "hooks/adapter.py garbled"]

OTHER_EVENTS = [("SessionStart", "session_start_startup"), ("UserPromptSubmit", "user_prompt_submit"),
                ("UserPromptSubmit", "user_prompt_submit_command"), ("PostToolUse", "post_tool_use_write"),
                ("PostToolUseFailure", "post_tool_use_failure_bash"), ("Stop", "stop")]
GATED = ["pre_tool_use_write", "pre_tool_use_bash", "pre_tool_use_edit", "pre_tool_use_skill"]


def entries(event: str, payload: Dict[str, Any], home: str) -> List[Dict[str, Any]]:
    """What the intact plugin's hooks.json starts for this payload (it was loaded before the damage)."""
    found = hookkit.commands_for(REPO / "hooks" / "hooks.json", event, payload, home)
    assert found
    return found


def run_broken(root: Path, job: JobDir, shim: str, event: str, payload: Dict[str, Any]) -> hookkit.Result:
    data = job.home / "plugin-data"
    data.mkdir(exist_ok=True)
    env = hookkit.hook_env(os.environ, job.project, root, data, hookkit.SESSION, shim)
    (entry,) = entries(event, payload, str(job.home))[:1]
    raw = hookkit.launch(entry, root, json.dumps(payload).encode(), env, job.project)
    assert raw.code == 0, raw
    return hookkit.Result(raw.code, raw.out, raw.err, hookkit.check_output(event, raw.out))


@pytest.fixture(params=sorted(DAMAGE))
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = copy_plugin(tmp_path)
    DAMAGE[request.param](root)
    return root


@pytest.mark.parametrize("name", GATED)
def test_the_gate_denies_while_a_job_is_active(name: str, broken: Path, job: JobDir, payload: Payloads,
                                               python_shim: str) -> None:
    job.plan(["a", "b"])
    result = run_broken(broken, job, python_shim, "PreToolUse", payload(name))
    assert result.denied, result
    assert "reinstall the baton plugin" in result.reason
    assert "refused while a job is active" in result.reason


@pytest.mark.parametrize("name", ["pre_tool_use_write", "pre_tool_use_edit", "pre_tool_use_skill"])
def test_the_gate_is_silent_without_a_job(name: str, broken: Path, job: JobDir, payload: Payloads,
                                          python_shim: str) -> None:
    result = run_broken(broken, job, python_shim, "PreToolUse", payload(name))
    assert result.out == ""


@pytest.mark.parametrize("damage", BREAKS_ALL)
@pytest.mark.parametrize("event,name", OTHER_EVENTS, ids=[n for _, n in OTHER_EVENTS])
@pytest.mark.parametrize("with_plan", [True, False], ids=["plan", "no plan"])
def test_other_hooks_stay_silent(event: str, name: str, with_plan: bool, damage: str, tmp_path: Path, job: JobDir,
                                 payload: Payloads, python_shim: str) -> None:
    broken = copy_plugin(tmp_path)
    DAMAGE[damage](broken)
    if with_plan:
        job.plan(["a", "b"])
    result = run_broken(broken, job, python_shim, event, payload(name))
    assert result.out == ""
    if with_plan:
        assert job.ledger() == []


@pytest.mark.parametrize("with_plan", [True, False], ids=["plan", "no plan"])
def test_a_missing_bash_scanner_refuses_bash_only_while_a_job_is_active(with_plan: bool, tmp_path: Path, job: JobDir,
                                                                        payload: Payloads, python_shim: str) -> None:
    root = copy_plugin(tmp_path)
    remove("store/shell/scan.py")(root)
    if with_plan:
        job.plan(["a"])
    bash = run_broken(root, job, python_shim, "PreToolUse", payload("pre_tool_use_bash"))
    assert bash.denied is with_plan
    if with_plan:
        assert "reinstall the baton plugin" in bash.reason
        assert "ModuleNotFoundError" in job.layout.errors.read_text()
    assert run_broken(root, job, python_shim, "PreToolUse", payload("pre_tool_use_write")).out == ""


def test_the_gate_uses_the_project_dir_not_the_cwd(tmp_path: Path, job: JobDir, payload: Payloads,
                                                   python_shim: str) -> None:
    """The model may have ``cd``-ed away: the bootstrap finds the plan through CLAUDE_PROJECT_DIR."""
    root = copy_plugin(tmp_path)
    remove("hooks/adapter.py")(root)
    job.plan(["a"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = hookkit.hook_env(os.environ, job.project, root, tmp_path, hookkit.SESSION, python_shim)
    (entry,) = entries("PreToolUse", payload("pre_tool_use_write"), str(job.home))
    raw = hookkit.launch(entry, root, json.dumps(payload("pre_tool_use_write")).encode(), env, elsewhere)
    assert raw.code == 0 and hookkit.check_output("PreToolUse", raw.out) is not None


def test_python_with_a_missing_script_would_exit_2(tmp_path: Path) -> None:
    """Why the bootstrap is inline: the host's trap (doc section 4.1) still holds for this Python."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(tmp_path / "missing.py")], capture_output=True)
    assert proc.returncode == 2
