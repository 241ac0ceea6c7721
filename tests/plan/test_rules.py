"""The plan's rules: each kind parsed, every mistake one line naming the rule and the field (exit 2),
and the helpers a sandbox or a proxy reads (read-only globs, the host allowlist, the checks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest

from store.plan.hostnames import normal_host
from store.plan.hosts import host_matches, host_policy, mcp_name
from store.plan.plan import PlanError, parse_plan
from store.plan.rules import DEFAULT_CHECKS, checks, read_only_globs

if TYPE_CHECKING:
    from conftest import Baton

RULES: List[Dict[str, Any]] = [
    {"id": "no-push", "deny_bash": "git push*", "reason": "a person pushes"},
    {"id": "main", "protect_branches": ["main", "release/*"], "local": True, "reason": "main is reviewed"},
    {"id": "no-debug", "deny_content": {"files": ["settings/prod*.py"], "pattern": r"DEBUG\s*=\s*True"},
     "reason": "production never runs in debug"},
    {"id": "syntax", "check_after_write": "default", "reason": "broken files are not done"},
    {"id": "lint", "check_after_write": {"**/*.sql": "sqlfluff lint {file}", "**/*.py": "default"}, "seconds": 30,
     "reason": "lint"},
    {"id": "egress", "allow_hosts": ["api.github.com", "*.internal.example"], "allow_mcp": ["github"],
     "reason": "data stays with us"},
]


def plan_with(*rules: Dict[str, Any]) -> Dict[str, Any]:
    return {"steps": ["a"], "rules": list(rules)}


def test_every_kind_parses() -> None:
    plan = parse_plan(plan_with(*RULES))
    assert [r.kind for r in plan.rules] == ["deny_bash", "protect_branches", "deny_content", "check_after_write",
                                            "check_after_write", "allow_hosts"]
    assert [r.id for r in plan.rules] == ["no-push", "main", "no-debug", "syntax", "lint", "egress"]
    assert plan.rules[0].deny_bash == "git push*"
    assert plan.rules[1].branches == ("main", "release/*") and plan.rules[1].local
    assert plan.rules[2].value["regex"].search("DEBUG = True")
    assert plan.rules[3].value == DEFAULT_CHECKS
    assert plan.rules[4].value == (("**/*.sql", "sqlfluff lint {file}"), ("**/*.py", "python"))
    assert plan.rules[5].value == ("api.github.com", "*.internal.example")


def test_a_deny_bash_rule_keeps_working_without_id_or_reason() -> None:
    assert parse_plan(plan_with({"deny_bash": "rm -rf *"})).rules[0].name == "deny_bash"


BAD = [
    ("not an object", ["x"], "rule 1: expected an object"),
    ("no kind", {"id": "a", "reason": "r"}, "rule 1: needs one of the fields deny_bash"),
    ("two kinds", {"id": "a", "reason": "r", "deny_bash": "x", "allow_hosts": ["a"]},
     "has both 'deny_bash' and 'allow_hosts'"),
    ("no id", {"reason": "r", "protect_branches": ["main"]}, "field 'id': every protect_branches rule needs an id"),
    ("no reason", {"id": "a", "allow_hosts": ["x.com"]},
     "field 'reason': every allow_hosts rule needs an id and a reason"),
    ("blank reason", {"id": "a", "reason": " ", "allow_hosts": ["x.com"]}, "field 'reason'"),
    ("id with spaces", {"id": " a", "reason": "r", "deny_bash": "x"}, "field 'id': one line"),
    ("unknown field", {"id": "a", "reason": "r", "protect_branches": ["main"], "remote": "origin"},
     "field 'remote': unknown field for a protect_branches rule (known: id, reason, protect_branches, local)"),
    ("option of another kind", {"id": "a", "reason": "r", "deny_bash": "x", "local": True}, "field 'local'"),
    ("branches not a list", {"id": "a", "reason": "r", "protect_branches": "main"},
     "field 'protect_branches': expected a non-empty list of non-empty strings, got string"),
    ("empty branch list", {"id": "a", "reason": "r", "protect_branches": []}, "non-empty list"),
    ("branch with a space", {"id": "a", "reason": "r", "protect_branches": ["ma in"]}, "'ma in' is not valid"),
    ("local not a boolean", {"id": "a", "reason": "r", "protect_branches": ["main"], "local": "yes"},
     "field 'local': expected true or false"),
    ("content not an object", {"id": "a", "reason": "r", "deny_content": "DEBUG"},
     "field 'deny_content': expected an object with 'files' and 'pattern'"),
    ("content without files", {"id": "a", "reason": "r", "deny_content": {"pattern": "x"}}, "deny_content'.files"),
    ("content with a bad regex", {"id": "a", "reason": "r", "deny_content": {"files": ["*"], "pattern": "("}},
     "pattern: not a valid regular expression"),
    ("content with a reason inside", {"id": "a", "reason": "r",
                                      "deny_content": {"files": ["*"], "pattern": "x", "reason": "y"}},
     "put 'reason' on the rule"),
    ("checks not default", {"id": "a", "reason": "r", "check_after_write": "all"},
     "expected \"default\" or an object mapping globs to commands"),
    ("check without a command", {"id": "a", "reason": "r", "check_after_write": {"*.py": ""}},
     "expected a command string"),
    ("default for an unknown type", {"id": "a", "reason": "r", "check_after_write": {"*.sql": "default"}},
     "no built-in check for this glob"),
    ("seconds too long", {"id": "a", "reason": "r", "check_after_write": "default", "seconds": 600},
     "field 'seconds': expected a number of seconds from 1 to 60"),
    ("hosts with a URL", {"id": "a", "reason": "r", "allow_hosts": ["https://x.com"]},
     "'https://x.com' is not a host pattern"),
    ("hosts with a path", {"id": "a", "reason": "r", "allow_hosts": ["x.com/a"]}, "is not a host pattern"),
    ("every host", {"id": "a", "reason": "r", "allow_hosts": ["*"]}, "'*' would allow every host"),
    ("allow_mcp not a list", {"id": "a", "reason": "r", "allow_hosts": ["x.com"], "allow_mcp": "github"},
     "field 'allow_mcp'"),
    ("duplicate ids", [{"id": "a", "reason": "r", "deny_bash": "x"}, {"id": "a", "reason": "r", "deny_bash": "y"}],
     "rule 2: field 'id': duplicate of rule 1"),
]


@pytest.mark.parametrize("name,rule,message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_rule_is_one_line_naming_rule_and_field(name: str, rule: Any, message: str) -> None:
    rules = rule if isinstance(rule, list) else [rule]
    with pytest.raises(PlanError) as caught:
        parse_plan({"steps": ["a"], "rules": rules}, "plan.json")
    text = str(caught.value)
    assert text.startswith("plan.json: rule ") and "\n" not in text
    assert message in text, text
    assert caught.value.code == 2


@pytest.mark.parametrize("name,rule,message", BAD[:6], ids=[b[0] for b in BAD[:6]])
def test_a_bad_rule_through_the_cli_exits_2_and_writes_nothing(name: str, rule: Any, message: str, baton: Baton,
                                                               tmp_path: Path) -> None:
    rules = rule if isinstance(rule, list) else [rule]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"steps": ["a"], "rules": rules}))
    run = baton("init", "--plan", str(plan_file))
    assert run.code == 2 and run.out == "" and run.err.count("\n") == 1
    assert message in run.err
    assert not (Path.cwd() / ".baton" / "plan.json").exists()


def test_read_only_globs_are_the_deny_content_files() -> None:
    plan = parse_plan(plan_with(*RULES, {"id": "keys", "reason": "r",
                                         "deny_content": {"files": ["**/*.pem", "settings/prod*.py"], "pattern": "K"}}))
    assert read_only_globs(plan.rules) == ("settings/prod*.py", "**/*.pem")
    assert read_only_globs(parse_plan(plan_with()).rules) == ()


def test_checks_list_glob_command_seconds_and_rule() -> None:
    plan = parse_plan(plan_with(*RULES))
    found = checks(plan.rules)
    assert found[0] == ("**/*.py", "python", 10.0, "syntax")
    assert ("**/*.sql", "sqlfluff lint {file}", 30.0, "lint") in found


def test_the_host_policy_needs_every_rule_to_allow_a_host() -> None:
    assert host_policy(parse_plan(plan_with()).rules) is None
    second = {"id": "gh-only", "allow_hosts": ["api.github.com"], "reason": "r"}
    policy = host_policy(parse_plan(plan_with(*RULES, second)).rules)
    assert policy is not None
    assert policy.hosts == ("api.github.com", "*.internal.example")
    assert policy.refusing("api.github.com") is None
    refused = policy.refusing("db.internal.example")
    assert refused is not None and refused.id == "gh-only"
    assert policy.refusing("evil.com") is not None and policy.refusing("evil.com").id == "egress"  # type: ignore


@pytest.mark.parametrize("host,pattern,match", [
    ("api.github.com", "api.github.com", True), ("API.GitHub.com.", "api.github.com", True),
    ("a.internal.example", "*.internal.example", True), ("a.b.internal.example", "*.internal.example", True),
    ("internal.example", "*.internal.example", False), ("evilinternal.example", "*.internal.example", False),
    ("api.github.com.evil.com", "api.github.com", False), ("[::1]", "::1", True),
    ("bücher.de", "xn--bcher-kva.de", True),
    ("127.0.0.1", "127.0.0.1", True), ("127.0.0.2", "127.0.0.1", False),
])
def test_host_matching(host: str, pattern: str, match: bool) -> None:
    assert host_matches(normal_host(host), pattern) is match


def test_mcp_servers_are_named_as_claude_code_names_them() -> None:
    policy = host_policy(parse_plan(plan_with({"id": "e", "reason": "r", "allow_hosts": ["x.com"],
                                               "allow_mcp": ["my-server", "plugin_*"]})).rules)
    assert policy is not None
    assert mcp_name("my-server") == "my_server"
    assert policy.refusing_mcp("my_server") is None
    assert policy.refusing_mcp("plugin_x_srv") is None
    assert policy.refusing_mcp("github") is not None
