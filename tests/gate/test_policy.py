"""The PreToolUse decision, called directly: effective rules per phase, the order of checks, the
reasons' wording, and the Bash helpers (patterns, rules, baton's own subcommands)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

import pytest

from store.gate import bash as bashgate
from store.gate import call as gatecall
from store.gate import policy, reads
from store.gate.rules import deny_bash
from store.monitor import export_settings
from store.plan.plan import Plan, Step, parse_plan
from store.shell import analyse


class Where:
    """A project with .baton/ and a HOME, for building calls."""

    def __init__(self, root: Path) -> None:
        self.project = root / "p"
        self.home = root / "h"
        (self.project / ".baton").mkdir(parents=True)
        self.home.mkdir()

    def call(self, tool: str, tool_input: Mapping[str, Any], env: Optional[Dict[str, str]] = None) -> gatecall.Call:
        return gatecall.Call(tool, tool_input, str(self.project), str(self.project), str(self.project / ".baton"),
                           str(self.home), env if env is not None else {"HOME": str(self.home)})

    def write(self, rel: str) -> gatecall.Call:
        return self.call("Write", {"file_path": str(self.project / rel), "content": "x"})

    def bash(self, command: str) -> gatecall.Call:
        return self.call("Bash", {"command": command})


@pytest.fixture
def where(tmp_path: Path) -> Where:
    return Where(tmp_path)


def plan_of(*steps: Any, **job: Any) -> Plan:
    return parse_plan({"steps": list(steps), **job})


@pytest.mark.parametrize("step,tools,writes,bash", [
    (Step("a"), None, None, ()),
    (Step("a", phase="discovered"), None, (), ()),
    (Step("a", phase="planned"), None, (), ()),
    (Step("a", phase="approved"), None, (), ()),
    (Step("a", phase="implemented"), None, None, ()),
    (Step("a", phase="validated"), None, (), gatecall.TEST_COMMANDS),
    (Step("a", phase="published"), None, None, ()),
    (Step("a", phase="validated", writes=("reports/**",), bash=("make check",)), None, ("reports/**",),
     ("make check",)),
    (Step("a", phase="discovered", tools=("Read",)), ("Read",), (), ()),
])
def test_rules_take_explicit_fields_then_phase_defaults(step: Step, tools: Any, writes: Any, bash: Any) -> None:
    rules = gatecall.Rules(step)
    assert (rules.tools, rules.writes, rules.bash) == (tools, writes, bash)


def test_no_step_means_no_rules() -> None:
    rules = gatecall.Rules(None)
    assert (rules.tools, rules.writes, rules.bash) == (None, None, ())


@pytest.mark.parametrize("command,patterns,matches", [
    ("pytest -q", ("pytest*",), True),
    ("pytest   -q\ttests", ("pytest -q tests",), True),
    ("pytest -q; rm -rf /", ("pytest*",), False),
    ("pytest -q && curl x", ("pytest*",), False),
    ("pytest -q | tee out", ("pytest*",), False),
    ("pytest -q > out", ("pytest*",), False),
    ("pytest `rm -rf x`", ("pytest*",), False),
    ("pytest $(rm -rf x)", ("pytest*",), False),
    ("pytest -q\nrm -rf x", ("pytest*",), False),
    ("pytest -q &", ("pytest*",), False),
    ("make test", ("pytest*", "make *"), True),
    ("Make test", ("make *",), False),
    ("make", ("make *",), False),
])
def test_matches_any(command: str, patterns: Any, matches: bool) -> None:
    assert gatecall.matches_any(command, patterns) is matches


def test_protected_beats_read_only_and_tools(where: Where) -> None:
    plan = plan_of({"id": "a", "tools": ["Read"]})
    reason = policy.decide(where.write(".baton/plan.json"), plan, plan.steps[0], ("waiting", "NEXT waits"))
    assert reason is not None and "inside .baton/" in reason


def test_read_only_beats_tools_and_writes(where: Where) -> None:
    plan = plan_of({"id": "a", "tools": ["Read"], "writes": ["src/**"]})
    reason = policy.decide(where.write("docs/x.md"), plan, plan.steps[0], ("limit", "the job reached its limit (x)."))
    assert reason == f"baton denied Write on {where.project}/docs/x.md: the job reached its limit (x). [baton:limit]"


def test_tools_beat_writes(where: Where) -> None:
    plan = plan_of({"id": "a", "tools": ["Edit"], "writes": ["src/**"]})
    reason = policy.decide(where.write("docs/x.md"), plan, plan.steps[0], None)
    assert reason is not None and reason.startswith("baton denied Write: step a allows only the tools Edit.")


def test_an_empty_tools_list_allows_no_gated_tool(where: Where) -> None:
    plan = plan_of({"id": "a", "tools": []})
    assert "allows only the tools (none)" in str(policy.decide(where.write("src/a"), plan, plan.steps[0], None))
    assert policy.decide(where.call("WebFetch", {"url": "x"}), plan, plan.steps[0], None) is not None


def test_writes_name_the_resolved_path_and_the_globs(where: Where) -> None:
    plan = plan_of({"id": "build", "writes": ["src/**", "tests/**"]})
    reason = policy.decide(where.write("docs/x.md"), plan, plan.steps[0], None)
    assert reason == ("baton denied writing docs/x.md (resolved): step build may write only src/**, tests/**. "
                      "Write inside those paths, or finish this step and record it (`baton record STEP done`) "
                      "first. [baton:writes]")
    assert policy.decide(where.write("src/a.py"), plan, plan.steps[0], None) is None


def test_an_empty_writes_list_says_nothing_may_be_written(where: Where) -> None:
    plan = plan_of({"id": "look", "phase": "discovered"})
    reason = str(policy.decide(where.write("a"), plan, plan.steps[0], None))
    assert "step look may not write any file (it only reads). Finish this step and record it" in reason
    assert "nothing" not in reason and "inside those paths" not in reason


def test_no_plan_still_protects_baton_and_the_key(where: Where) -> None:
    assert policy.decide(where.write("src/a.py"), None, None, None) is None
    assert policy.decide(where.write(".baton/steps.jsonl"), None, None, None) is not None
    key = str(where.home / ".config" / "baton" / "approval.key")
    reason = policy.decide(where.call("Write", {"file_path": key}), None, None, None)
    assert reason is not None and "approval key; only a person approves steps, with /baton:approve" in reason


def test_the_key_folder_follows_xdg_config_home(where: Where, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    env = {"HOME": str(where.home), "XDG_CONFIG_HOME": str(xdg)}
    call = where.call("Write", {"file_path": str(xdg / "baton" / "approval.key")}, env)
    assert "approval key" in str(policy.decide(call, None, None, None))
    read = where.call("Read", {"file_path": str(xdg / "baton" / "approval.key")}, env)
    assert "baton denied reading baton's approval key" in str(policy.decide(read, None, None, None))
    elsewhere = where.call("Read", {"file_path": str(where.home / ".config" / "baton" / "approval.key")}, env)
    assert policy.decide(elsewhere, None, None, None) is None
    settings = where.call("Read", {"file_path": str(xdg / "baton" / "telemetry.env")}, env)
    assert "baton denied reading baton's telemetry settings" in str(policy.decide(settings, None, None, None))
    assert reads.TELEMETRY_SETTINGS == export_settings.FILE_NAME


def test_protect_globs(where: Where) -> None:
    plan = plan_of("a", protect=["secrets/**", "*.pem"])
    assert "the plan's `protect` list covers it" in str(policy.decide(where.write("secrets/k"), plan, None, None))
    assert policy.decide(where.write("k.pem"), plan, None, None) is not None
    assert policy.decide(where.write("sub/k.pem"), plan, None, None) is None


@pytest.mark.parametrize("tool_input,reason", [
    ({"skill": "baton:approve"}, "baton denied /baton:approve"),
    ({"skill": "/Baton:Approve"}, "baton denied /baton:approve"),
    ({"skill": 3}, "its input has no skill name"),
    ({}, "its input has no skill name"),
    ({"skill": "baton:brief"}, None),
    ({"skill": "other:approve"}, None),
])
def test_skill(where: Where, tool_input: Dict[str, Any], reason: Optional[str]) -> None:
    got = policy.decide(where.call("Skill", tool_input), plan_of("a"), None, None)
    assert (got is None) if reason is None else (got is not None and reason in got)


@pytest.mark.parametrize("tool_input,denied", [
    ({"prompt": "/baton:approve x"}, True),
    ({"nested": {"deeper": ["/BATON:APPROVE x"]}}, True),
    ({"prompt": "baton status then approve the PR"}, True),  # errs on the side of refusing
    ({"prompt": "/baton:brief"}, False),
    ({"prompt": "approve the PR"}, False),
])
def test_schedulers(where: Where, tool_input: Dict[str, Any], denied: bool) -> None:
    for tool in policy.SCHEDULERS:
        assert (policy.decide(where.call(tool, tool_input), plan_of("a"), None, None) is not None) is denied


def test_read_without_a_path_is_denied(where: Where) -> None:
    assert "has no file_path" in str(policy.decide(where.call("Read", {}), None, None, None))


def test_mentions_protected() -> None:
    assert gatecall.mentions_protected("python3 x.py .BATON/plan.json")
    assert gatecall.mentions_protected("cat ~/.config/baton/approval.key")
    assert gatecall.mentions_protected("cat ~/.config/baton/telemetry.env")
    assert gatecall.mentions_protected("cat deploy/telemetry.env") is None  # a file of the project's own
    assert gatecall.mentions_protected("python3 -c 'open(\"\uff0ebaton/x\")'")
    assert gatecall.mentions_protected("python3 build.py") is None


def test_reason_texts() -> None:
    step = Step("design", phase="approved")
    assert policy.waiting_reason(step) == ("waiting",
        "step design waits for a person's approval, and until then only reading is allowed. Stop and ask the "
        "person to type /baton:approve design; do not try to approve it yourself.")
    assert policy.limit_reason(["tool_calls 5 of 5", "turns 9 of 9"]) == ("limit",
        "the job reached its limit (tool_calls 5 of 5, turns 9 of 9), so only reading is allowed. Stop and report "
        "to the person; they can raise the limit in .baton/plan.json.")


# --- the Bash helpers --------------------------------------------------------------------------

@pytest.mark.parametrize("argv,sub", [
    (("baton", "brief"), "brief"),
    (("baton", "--json", "status"), "status"),
    (("baton",), ""),
    (("python3", "/plugin/store", "approve", "x"), "approve"),
    (("/opt/baton/bin/baton", "record", "a", "done"), "record"),
])
def test_subcommand(argv: Any, sub: str) -> None:
    assert bashgate._subcommand(argv) == sub


@pytest.mark.parametrize("command,pattern,hit", [
    ("git push origin main", "git push*", True),
    ("ls && git   push", "git push*", True),
    ("ls | git push", "git push*", True),
    ("echo 'git push'", "git push*", False),
    ("rm -rf /", "rm -rf /*", True),
    ("rm -rf /tmp/x", "rm -rf /", False),
    ("(git push)", "git push*", True),
    ("echo $(git push origin)", "git push*", True),
    ("echo `git push`", "git push*", True),
    ("if true; then git push; fi", "git push*", True),
    ("while true; do git push; done", "git push*", True),
    ("{ git push; }", "git push*", True),
    ("! git push", "git push*", True),
    ("git status\ngit push", "git push*", True),
    ('echo "git push"', "git push*", False),
    ("undo git push", "git push*", True),  # an unknown program given `git push` may run it, as `watch` does
    ("watch git push", "git push*", True),
    ("echo do git push", "git push*", False),
    ("sudo git push", "git push*", True),
    ("sudo -E git push", "git push*", True),
    ("env GIT_TRACE=1 git push", "git push*", True),
    ("command git push", "git push*", True),
    ("timeout 30 git push", "git push*", True),
    ("nice -n 5 git push", "git push*", True),
    ("nohup git push", "git push*", True),
    ("FOO=1 git push", "git push*", True),
    ("echo sudo git push", "git push*", False),
])
def test_rule_hit(command: str, pattern: str, hit: bool) -> None:
    assert bool(deny_bash.hit(pattern, command, analyse(command, "/p", "/h"))) is hit


@pytest.mark.parametrize("argv,with_plan,phrase", [
    (("baton", "approve", "x"), True, "baton denied `baton approve`"),
    (("baton", "--approve"), True, "baton denied `baton approve`"),
    (("baton", "APPROVE"), True, "baton denied `baton approve`"),
    (("baton", "init", "a"), True, "baton denied `baton init`"),
    (("baton", "init", "a"), False, None),
    (("baton", "record", "a", "done", "approve later"), True, None),
    (("baton", "verify"), True, None),
    (("baton", "rm"), True, "baton denied `baton rm`: not a command the agent may run"),
    (("baton", "run", "--", "--permission-mode", "acceptEdits"), True, "baton denied `baton run`: not a command"),
    (("baton", "session", "s1", "completed"), True, "baton denied `baton session`: not a command"),
])
def test_baton_verdict(argv: Any, with_plan: bool, phrase: Optional[str]) -> None:
    verdict = bashgate._baton_verdict([argv], plan_of("a") if with_plan else None)
    assert (verdict is None) if phrase is None else (verdict is not None and verdict.startswith(phrase))


def test_bash_through_decide_in_a_waiting_step(where: Where) -> None:
    plan = plan_of({"id": "d", "approval": True})
    waiting = policy.waiting_reason(plan.steps[0])
    assert policy.decide(where.bash("git status"), plan, plan.steps[0], waiting) is None
    assert policy.decide(where.bash("baton brief && baton status"), plan, plan.steps[0], waiting) is None
    reason = policy.decide(where.bash("touch a"), plan, plan.steps[0], waiting)
    assert reason == (f"baton denied this command: {waiting[1]} Read-only commands and `baton brief` still work. "
                      "[baton:waiting]")


def test_bash_writes_into_a_symlinked_state_folder_are_denied(where: Where, tmp_path: Path) -> None:
    (where.project / "cfg").symlink_to(where.project / ".baton")
    reason = policy.decide(where.bash("echo x > cfg/plan.json"), plan_of("a"), None, None)
    assert reason is not None and "inside .baton/" in reason
    assert os.path.islink(where.project / "cfg")
