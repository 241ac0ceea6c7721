"""Every tool and hook event of the Claude Code under test is known to baton, and every tool that
runs a command, writes or reads a file starts the gate (issue 23.6, 28.4).

The tools are read from a session's first request (its ``tools`` array, and the deferred tools the
system message names for ToolSearch), with and without the opt-in PowerShell tool; the hook events
from the settings schema in the binary. A Claude Code upgrade that adds a tool or an event fails
here until ``store.gate.toolset`` classifies it (and, if it can run, write or read, a PreToolUse
matcher starts the gate for it). Run it on another version with
``BATON_CLAUDE=$(dev/install-claude-code 2.1.332 | tail -n 1)`` (docs/development.md).
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path

from store.gate import toolset

from .driver import Claude
from .fakeapi import FakeAPI, text

REPO = Path(__file__).resolve().parents[2]
DEFERRED = re.compile(r"deferred tools are now available via ToolSearch\..*?:\n((?:[A-Za-z0-9_]+\n)+)", re.S)
GATED_KINDS = ("runs", "writes", "reads", "prompts", "sends")


def offered(claude: Claude, fake_api: FakeAPI, project: Path, plugin: Path, env: dict[str, str]) -> set[str]:
    """The tools a session offers the model: in the request's tools array, or named for ToolSearch."""
    fake_api.script = [[text("nothing to do")]]
    seen = len(fake_api.requests_main())
    run = claude.run("hello", cwd=project, plugin_dir=plugin, env=env)
    assert run.returncode == 0, run.stderr
    body = fake_api.requests_main()[seen]
    names = {tool["name"] for tool in body["tools"]}
    system = body.get("system")
    blocks = [system] if isinstance(system, str) else [b.get("text", "") for b in system or []]
    for message in body["messages"]:
        content = message["content"]
        blocks += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    lists = [match.group(1) for block in blocks for match in DEFERRED.finditer(block)]
    assert lists or "ToolSearch" not in names, "ToolSearch is offered and no deferred tool is named: has Claude " \
                                               "Code changed how it offers them?"  # 2.1.300: all in the array
    return names | {name for listed in lists for name in listed.split()}


def hook_events(exe: Path) -> list[str]:
    """The longest list of hook event names in the binary: the settings schema's enum."""
    with exe.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        lists = [m.group(0) for m in re.finditer(rb'\["PreToolUse","PostToolUse"(?:,"[A-Za-z]+")*\]', data)]
    assert lists, f"no list of hook events found in {exe}"
    return list(json.loads(max(lists, key=len)))


def pre_tool_use_starts(tool: str) -> bool:
    """Whether hooks.json starts a PreToolUse hook for every call of ``tool`` (Read: for the key's paths)."""
    entries = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    started = [entry for entry in entries if re.fullmatch(entry["matcher"], tool)]
    return any(all("if" not in hook for hook in entry["hooks"]) for entry in started) or (
        tool == "Read" and bool(started))


def test_every_tool_that_runs_writes_or_reads_is_gated(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    tools = offered(claude, fake_api, project, plugin_copy, {})
    tools |= offered(claude, fake_api, project, plugin_copy, {"CLAUDE_CODE_USE_POWERSHELL_TOOL": "1"})
    assert {"Bash", "Write", "Read", "PowerShell", "NotebookEdit"} <= tools, tools  # no Monitor in 2.1.300
    unknown = sorted(tools - set(toolset.TOOLS))
    assert not unknown, f"Claude Code offers tools baton does not classify: {unknown}; add them to " \
                        "store.gate.toolset.TOOLS and docs/gate.md's table (gate them if they run, write or read)"
    open_ = sorted(t for t in tools if toolset.TOOLS[t] in GATED_KINDS and not pre_tool_use_starts(t))
    assert not open_, f"these tools run, write, read or send and start no PreToolUse hook: {open_}"


def test_every_hook_event_is_known(claude_exe: Path) -> None:
    events = hook_events(claude_exe)
    assert {"PreToolUse", "SessionStart", "Stop"} <= set(events), events
    known = {event for names in toolset.EVENTS.values() for event in names if names is not toolset.EVENTS[
        "not hooked yet"]}
    unknown = sorted(set(events) - known)
    assert not unknown, f"Claude Code has hook events baton does not classify or does not hook yet: {unknown}; " \
                        "see store.gate.toolset.EVENTS and docs/gate.md, 'Every tool'"
    hooked = set(json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"])
    assert hooked == set(toolset.EVENTS["hooked"])
