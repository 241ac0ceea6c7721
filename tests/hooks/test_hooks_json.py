"""hooks/hooks.json: explicit matchers, exec form, the gate failing closed with a short timeout,
and the inline bootstrap identical to hooks/bootstrap.py (``dev/hooks_json.py --check``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import hookkit
import pytest
from conftest import REPO, Hook, JobDir, Payloads

from hooks import adapter

HOOKS_JSON = REPO / "hooks" / "hooks.json"
KNOWN_EVENTS = set(
    "PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification UserPromptSubmit UserPromptExpansion "
    "SessionStart SessionEnd Stop StopFailure SubagentStart SubagentStop PreCompact PostCompact PreModelSwitch "
    "PostModelSwitch PermissionRequest PermissionDenied Setup TeammateIdle TaskCreated TaskCompleted Elicitation "
    "ElicitationResult ConfigChange WorktreeCreate WorktreeRemove InstructionsLoaded CwdChanged FileChanged "
    "DirectoryAdded MessageDisplay".split())
GATED_TOOLS = {"Write", "Edit", "NotebookEdit", "Bash", "Monitor", "PowerShell", "Grep", "Glob", "EnterWorktree",
               "ExitWorktree", "Workflow", "Skill", "CronCreate", "ScheduleWakeup", "Read"}
EXTERNAL = "^(WebFetch|mcp__.+)$"


def config() -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(HOOKS_JSON.read_text(encoding="utf-8"))
    return data


def groups() -> Iterator[Tuple[str, Dict[str, Any]]]:
    for event, items in config()["hooks"].items():
        for group in items:
            yield event, group


def entries() -> List[Tuple[str, Dict[str, Any], Dict[str, Any]]]:
    return [(event, group, entry) for event, group in groups() for entry in group["hooks"]]


def test_only_known_events_each_with_a_handler() -> None:
    events = set(config()["hooks"])
    assert events <= KNOWN_EVENTS
    assert events == set(adapter.MODULES)
    assert len(config()["hooks"]) == 8


@pytest.mark.parametrize("event", sorted(hookkit.TOOL_EVENTS))
def test_tool_events_have_explicit_matchers(event: str) -> None:
    for group in config()["hooks"][event]:
        matcher = group.get("matcher")
        assert isinstance(matcher, str) and matcher.strip() not in ("", "*"), group
        if matcher == EXTERNAL:  # the one regex: anchored, so it matches these tools and no other
            continue
        names = [m.strip() for m in matcher.split("|")]
        assert all(n.isidentifier() for n in names), f"{matcher!r} would be read as a regex"
        assert set(names) <= GATED_TOOLS


def test_the_external_tools_matcher_is_anchored() -> None:
    pre = [g["matcher"] for g in config()["hooks"]["PreToolUse"]]
    assert EXTERNAL in pre
    assert EXTERNAL.startswith("^") and EXTERNAL.endswith("$")


def test_session_start_and_stop_have_no_matcher() -> None:
    assert all("matcher" not in g for g in config()["hooks"]["SessionStart"])  # every source
    assert all("matcher" not in g for g in config()["hooks"]["Stop"])
    assert all("matcher" not in g for g in config()["hooks"]["StopFailure"])  # every kind of API error


def test_stop_failure_never_blocks() -> None:
    """Claude Code ignores a StopFailure answer, but an overload must not meet a hook set to block."""
    assert all("onFailure" not in e for e in config()["hooks"]["StopFailure"][0]["hooks"])


@pytest.mark.parametrize("tool,gated", [("Write", True), ("Edit", True), ("NotebookEdit", True), ("Bash", True),
                                        ("Skill", True), ("CronCreate", True), ("ScheduleWakeup", True),
                                        ("WebFetch", True), ("mcp__github__create_issue", True),
                                        ("mcp__plugin_x_srv__tool", True), ("Read", False), ("Agent", False),
                                        ("Monitor", True), ("PowerShell", True), ("Grep", True), ("Glob", True),
                                        ("EnterWorktree", True), ("ExitWorktree", True), ("Workflow", True),
                                        ("WebSearch", False), ("TodoWrite", False), ("PowerShellX", False),
                                        ("NotWebFetch", False), ("xmcp__a__b", False)])
def test_which_tools_start_the_gate(tool: str, gated: bool) -> None:
    payload = {"tool_name": tool, "tool_input": {"file_path": "/project/README.md"}}
    started = hookkit.commands_for(HOOKS_JSON, "PreToolUse", payload, "/home/u")
    assert bool(started) is gated


@pytest.mark.parametrize("path", ["/home/u/.config/baton/approval.key", "/elsewhere/approval.key",
                                  "/home/u/.config/baton/other"])
def test_reads_start_the_gate_only_for_the_key(path: str) -> None:
    payload = {"tool_name": "Read", "tool_input": {"file_path": path}}
    assert hookkit.commands_for(HOOKS_JSON, "PreToolUse", payload, "/home/u")
    reads = [e for ev, g, e in entries() if ev == "PreToolUse" and g["matcher"] == "Read"]
    assert reads and all(e.get("if", "").startswith("Read(") for e in reads)


def test_recorders_match_the_write_tools() -> None:
    for event in ("PostToolUse", "PostToolUseFailure"):
        (group,) = config()["hooks"][event]
        assert set(group["matcher"].split("|")) == {"Write", "Edit", "NotebookEdit", "Bash", "Monitor"}


@pytest.mark.parametrize("index", range(len(entries())))
def test_every_hook_is_exec_form_with_the_inline_bootstrap(index: int) -> None:
    event, _, entry = entries()[index]
    assert entry["type"] == "command"
    assert entry["command"] == "/bin/sh", "exec form: the launcher alone (dev/hooks_json.py)"
    args = entry["args"]
    assert args[:2] == ["-c", 'here=$PWD; cd / || exit 1; exec python3 -S -c "$0" "$@" "$here"']
    assert args[2] == (REPO / "hooks" / "bootstrap.py").read_text(encoding="utf-8")
    assert args[3:] == ["${CLAUDE_PLUGIN_ROOT}", event]
    assert isinstance(entry["timeout"], int) and 0 < entry["timeout"] <= 600
    compile(args[2], "<bootstrap>", "exec")


def test_the_gate_fails_closed_with_a_short_timeout() -> None:
    gate = [e for ev, _, e in entries() if ev == "PreToolUse"]
    assert gate and all(e.get("onFailure") == "block" for e in gate)
    assert all(e["timeout"] <= 10 for e in gate)
    others = [e for ev, _, e in entries() if ev != "PreToolUse"]
    assert all("onFailure" not in e for e in others), "recorders and Stop fail open"
    assert all(e["timeout"] <= 10 for ev, _, e in entries() if ev not in ("UserPromptSubmit", "PostToolUse"))
    # PostToolUse runs check_after_write, whose own limit is at most 60 s (store.plan.rules)
    assert all(60 < e["timeout"] <= 90 for ev, _, e in entries() if ev == "PostToolUse")


def test_the_manifest_does_not_list_hooks_json_again() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert "hooks" not in manifest


def test_hooks_json_is_generated_from_the_bootstrap() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "dev" / "hooks_json.py"), "--check"], capture_output=True)
    assert proc.returncode == 0, "hooks/hooks.json is stale: run python3 dev/hooks_json.py"


def test_the_check_fails_when_the_bootstrap_changes(tmp_path: Path) -> None:
    for part in ("dev", "hooks", "store"):  # store: the table of gated tools (store/gate/toolset.py)
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    script = [sys.executable, str(tmp_path / "dev" / "hooks_json.py")]
    assert subprocess.run([*script, "--check"]).returncode == 0
    with (tmp_path / "hooks" / "bootstrap.py").open("a") as handle:
        handle.write("# changed\n")
    assert subprocess.run([*script, "--check"]).returncode == 1
    assert subprocess.run(script).returncode == 0
    assert subprocess.run([*script, "--check"]).returncode == 0


SHADOWS = ("json", "enum", "re", "types", "functools", "collections")  # what a hook imports before baton's code


def test_a_projects_own_modules_never_shadow_the_standard_library(subproc: Hook, job: JobDir,
                                                                   payload: Payloads) -> None:
    """``python3 -c`` puts the current folder (the project) first on the import path; a project
    with its own json.py or enum.py at its root must still get baton's answers, not run them."""
    for name in SHADOWS:
        (job.project / f"{name}.py").write_text(f"raise SystemExit('the project {name}.py ran')\n")
    denied = subproc("PreToolUse", payload("pre_tool_use_write", tool_input={"file_path": job.path(".baton/x"),
                                                                             "content": ""}))
    assert denied.denied and "[baton:own-files]" in denied.reason
    job.plan(["port", "ship"])
    assert "NEXT: port" in subproc("SessionStart", payload("session_start_startup")).context
