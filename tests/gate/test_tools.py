"""The tools beyond Write, Edit and Bash, called through the decision directly: Grep, Glob, Read
and a WebFetch of a file: URL never reach the approval key's folder; a Monitor's command is read
as Bash's; PowerShell and the tools that work outside the step are refused while a job is active.
The same tools through the real CLI: tests/e2e/test_tool_coverage.py and test_tool_gates.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping, Optional

import pytest

from store.gate import call as gatecall
from store.gate import policy, toolset
from store.plan.plan import Plan, parse_plan
from store.sandbox import claude_settings

ROOT = Path(__file__).resolve().parents[2]


class Where:
    def __init__(self, root: Path) -> None:
        self.project = root / "p"
        self.home = root / "h"
        (self.project / ".baton").mkdir(parents=True)
        (self.home / ".config" / "baton").mkdir(parents=True)
        (self.home / ".config" / "baton" / "approval.key").write_text("secret\n")

    def decide(self, tool: str, tool_input: Mapping[str, Any], plan: Optional[Plan] = None,
               cwd: Optional[Path] = None) -> Optional[str]:
        call = gatecall.Call(tool, tool_input, str(cwd or self.project), str(self.project),
                             str(self.project / ".baton"), str(self.home), {"HOME": str(self.home)})
        return policy.decide(call, plan, plan.steps[0] if plan else None, None)


@pytest.fixture
def where(tmp_path: Path) -> Where:
    return Where(tmp_path)


JOB = parse_plan({"steps": [{"id": "a", "phase": "implemented", "writes": ["src/**"]}]})


@pytest.mark.parametrize("tool,tool_input", [
    ("Grep", {"pattern": "x", "path": "~"}),
    ("Grep", {"pattern": "x", "path": "~/.config"}),
    ("Grep", {"pattern": "x", "path": "/"}),
    ("Grep", {"pattern": "x", "path": "~/.config/baton/approval.key"}),
    ("Glob", {"pattern": "*", "path": "~/.config/baton"}),
    ("Glob", {"pattern": "**", "path": "~/.CONFIG/Baton/"}),
    ("Read", {"file_path": "~/.config/baton/approval.key"}),
    ("WebFetch", {"url": "file:///", "prompt": "p"}),
])
def test_no_reading_tool_reaches_the_key(where: Where, tool: str, tool_input: Mapping[str, Any]) -> None:
    for plan in (None, JOB):
        assert "[baton:key]" in str(where.decide(tool, tool_input, plan)), (tool, tool_input, plan)


def test_a_file_url_is_read_as_its_path(where: Where) -> None:
    url = f"FILE://localhost{where.home}/%2Econfig/baton/approval.key"
    assert "[baton:key]" in str(where.decide("WebFetch", {"url": url, "prompt": "p"}, JOB))
    assert where.decide("WebFetch", {"url": f"file://{where.project}/src", "prompt": "p"}, JOB) is None


def test_a_search_from_a_folder_that_holds_the_key_is_refused(where: Where) -> None:
    assert "[baton:key]" in str(where.decide("Grep", {"pattern": "x"}, cwd=where.home))
    assert where.decide("Grep", {"pattern": "x"}) is None  # the project's own folder


def test_a_search_through_a_link_to_the_key_folder_is_refused(where: Where) -> None:
    (where.project / "cfg").symlink_to(where.home / ".config" / "baton")
    assert "[baton:key]" in str(where.decide("Grep", {"pattern": "x", "path": "cfg"}))
    assert "[baton:key]" in str(where.decide("Glob", {"pattern": "*", "path": "cfg"}))


@pytest.mark.parametrize("tool,tool_input", [
    ("Grep", {"pattern": "x", "path": "src"}),
    ("Glob", {"pattern": "*.py"}),
    ("Glob", {"pattern": "*", "path": "~"}),  # lists the key's name at most, not its text
    ("Read", {"file_path": "~/.config/other"}),
    ("WebFetch", {"url": "https://example.com/baton/approval", "prompt": "p"}),
])
def test_other_reads_pass(where: Where, tool: str, tool_input: Mapping[str, Any]) -> None:
    assert where.decide(tool, tool_input, JOB) is None


@pytest.mark.parametrize("tool_input", [{"pattern": "x", "path": 3}, {"pattern": "x", "path": "a\x00b"}])
def test_a_search_path_that_cannot_be_checked_is_refused(where: Where, tool_input: Mapping[str, Any]) -> None:
    assert "[baton:payload]" in str(where.decide("Grep", tool_input))


def test_a_monitor_command_is_read_as_bash(where: Where) -> None:
    assert "[baton:own-files]" in str(where.decide("Monitor", {"command": "tail -f x > .baton/steps.jsonl"}))
    assert "[baton:key]" in str(where.decide("Monitor", {"command": "cat ~/.config/baton/approval.key"}))
    assert where.decide("Monitor", {"command": "tail -f src/log", "description": "d"}, JOB) is None


def test_a_monitor_socket_is_judged_by_allow_hosts(where: Where) -> None:
    hosts = parse_plan({"rules": [{"id": "net", "allow_hosts": ["example.com"], "reason": "only there"}],
                        "steps": [{"id": "a"}]})
    assert where.decide("Monitor", {"ws": {"url": "wss://example.com/feed"}}, hosts) is None
    assert "[baton:allow-hosts]" in str(where.decide("Monitor", {"ws": {"url": "wss://evil.test/x"}}, hosts))
    assert "[baton:payload]" in str(where.decide("Monitor", {"other": 1}, JOB))
    assert where.decide("Monitor", {"other": 1}) is None  # no job: Claude Code's own checks


def test_powershell_is_refused_in_a_job_and_kept_off_baton_files_without_one(where: Where) -> None:
    assert "[baton:unread-shell]" in str(where.decide("PowerShell", {"command": "Get-ChildItem"}, JOB))
    assert where.decide("PowerShell", {"command": "Get-ChildItem"}) is None
    assert "[baton:key]" in str(where.decide("PowerShell", {"command": "gc ~/.config/baton/approval.key"}))
    assert "[baton:own-files]" in str(where.decide("PowerShell", {"command": "sc .baton/steps.jsonl x"}))
    assert "[baton:payload]" in str(where.decide("PowerShell", {}))


@pytest.mark.parametrize("tool", ["EnterWorktree", "ExitWorktree", "Workflow"])
def test_tools_that_work_outside_the_step_are_refused_in_a_job(where: Where, tool: str) -> None:
    reason = str(where.decide(tool, {"name": "x"}, JOB))
    assert f"baton denied {tool}: " in reason and ("[baton:worktree]" in reason or "[baton:workflow]" in reason)
    assert where.decide(tool, {"name": "x"}) is None


def test_every_gated_tool_starts_the_gate() -> None:
    """hooks.json's PreToolUse matchers cover each tool TOOLS says runs, writes, reads or prompts."""
    entries = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]

    for tool, kind in toolset.TOOLS.items():
        started = [e for e in entries if re.fullmatch(e["matcher"], tool)]
        if kind not in ("runs", "writes", "reads", "prompts", "sends"):
            continue
        assert started, f"{tool} ({kind}) starts no PreToolUse hook"
        unfiltered = any(all("if" not in h for h in e["hooks"]) for e in started)
        assert unfiltered or tool == "Read", f"{tool} starts the gate only through a filter"


def test_a_monitor_is_judged_by_the_bash_rules_but_allowed_only_by_its_own() -> None:
    """Claude Code matches a Monitor's command against ``Bash(...)`` rules; ``Bash`` alone does not allow a
    Monitor and ``Monitor`` does (seen in 2.1.328), so baton's verdict does the same."""
    person = claude_settings.PersonRules()
    for kind, rule in (("allow", "Bash"), ("allow", "Bash(make *)"), ("deny", "Bash"), ("ask", "Monitor")):
        person.add(kind, rule, "settings.json")
    view = person.for_tool("Monitor")
    assert view.rules["allow"] == [("make *", "settings.json")]
    assert view.rules["deny"] == [("", "settings.json")]
    assert view.rules["ask"] == [("", "settings.json")]
    assert person.for_tool("Bash") is person
