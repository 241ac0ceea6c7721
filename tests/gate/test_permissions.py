"""The person's own Claude Code rules, read from every source Claude Code reads, and applied by baton
to the ORIGINAL command: deny rules hold however the command is written, allow rules only for
what baton can read through, and the permission modes mean what they mean in Claude Code."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from store.gate import permissions
from store.sandbox import claude_settings
from store.sandbox.claude_settings import PersonRules


@pytest.mark.parametrize("pattern, text, hit", [
    ("", "anything at all", True),
    ("npm test", "npm test", True),
    ("npm test", "npm test --watch", False),
    ("npm run test:*", "npm run test", True),
    ("npm run test:*", "npm run test -- -u", True),
    ("npm run test:*", "npm run tests", False),
    ("git * main", "git push origin main", True),
    ("git push *", "git push", True),
    ("ls", "ls -la", False),
])
def test_rule_forms(pattern: str, text: str, hit: bool) -> None:
    assert permissions.rule_matches(pattern, text) is hit


def test_bash_alone_allows_every_command_but_a_denied_one() -> None:
    person = rules(allow=["Bash"], deny=["Bash(rm:*)"])
    assert permissions.judge("x=$(date); echo $x", "default", person, PROJECT, PROJECT, "/h").decision == "allow"
    assert permissions.judge("x=rm; $x f", "default", person, PROJECT, PROJECT, "/h").decision == "deny"


def rules(**kinds: List[str]) -> PersonRules:
    found = PersonRules()
    for kind, items in kinds.items():
        for rule in items:
            found.add(kind, rule, "user")
    return found


PERSON = rules(deny=["Bash(rm:*)", "Bash(git push:*)"], ask=["Bash(docker:*)"], allow=["Bash(npm test)"])
PROJECT = "/work/p"


@pytest.mark.parametrize("command", [
    "rm -f junk", "/bin/rm -f junk", "r''m -f junk", "\\rm junk", "(rm junk)", "{ rm junk; }", "sudo rm junk",
    "env X=1 rm junk", "timeout 5 rm junk", "xargs rm < list", "ls && rm junk", "ls; rm junk", "ls | rm -",
    "echo $(rm junk)", "x=rm; $x junk", "eval rm junk", "ls() { rm -rf x; }; ls", "cat <<EOF\n$(rm x)\nEOF",
    "git push", "git push origin main", "cmd=push; git $cmd", "command git push", "git $(echo push)",
])
def test_a_deny_rule_holds_however_the_command_is_written(command: str) -> None:
    verdict = permissions.judge(command, "acceptEdits", PERSON, PROJECT, PROJECT, "/home/me")
    assert verdict.decision == "deny", (command, verdict.why)
    assert "deny rule" in verdict.why


@pytest.mark.parametrize("command, mode, decision", [
    ("ls src", "default", "allow"),
    ("cat README.md | grep x", "default", "allow"),
    ("git status && git log -3", "default", "allow"),
    ("find . -name '*.py'", "default", "allow"),
    ("cd src && ls", "default", "allow"),
    ("echo hi >&2", "default", "allow"),
    ("npm test", "default", "allow"),
    ("npm test && ls", "default", "allow"),
    ("CI=1 npm test", "default", "ask"),  # an assignment can change what the program does
    ("npm test --watch", "default", "ask"),
    ("docker ps", "bypassPermissions", "ask"),  # an ask rule asks in every mode
    ("python3 -c 'print(1)'", "default", "ask"),
    ("echo hi > out.txt", "default", "ask"),
    ("echo hi > out.txt", "acceptEdits", "allow"),
    ("mkdir -p build && touch build/x", "acceptEdits", "allow"),
    ("mkdir /etc/x", "acceptEdits", "ask"),
    ("cat /etc/passwd", "default", "ask"),
    ("cat ../other/file", "default", "ask"),
    ("find . -delete", "acceptEdits", "ask"),
    ("git -c core.pager=x log", "default", "ask"),
    ("sort -o out.txt in.txt", "default", "ask"),
    ("sed -i s/a/b/ f", "acceptEdits", "ask"),
    ("make", "bypassPermissions", "allow"),
    ("ls", "plan", "allow"),
    ("make", "plan", "deny"),
    ("make", "dontAsk", "deny"),
])
def test_what_runs_without_a_prompt(command: str, mode: str, decision: str) -> None:
    verdict = permissions.judge(command, mode, PERSON, PROJECT, PROJECT, "/home/me")
    assert verdict.decision == decision, (command, mode, verdict.why)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    return tmp_path / "home"


def settings(path: Path, **permissions: List[str]) -> None:
    path.write_text(json.dumps({"permissions": permissions}))


def test_rules_come_from_the_user_the_project_and_its_local_settings(home: Path) -> None:
    project = home.parent / "project"
    settings(home / ".claude" / "settings.json", deny=["Bash(rm:*)"], allow=["Read"])
    settings(project / ".claude" / "settings.json", deny=["Bash(curl:*)"], allow=["Bash(make)"])
    settings(project / ".claude" / "settings.local.json", ask=["Bash(docker:*)"], allow=["Bash(npm test)"])
    found = claude_settings.load(str(project), {"HOME": str(home)})
    assert found.rules["deny"] == [("rm:*", "user"), ("curl:*", "project")]
    assert found.rules["ask"] == [("docker:*", "local")]
    assert found.rules["allow"] == [("npm test", "local")], "a project not trusted yet allows nothing"
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}))
    assert ("make", "project") in claude_settings.load(str(project), {"HOME": str(home)}).rules["allow"]


def test_claude_codes_own_sandbox_is_noticed(home: Path) -> None:
    (home / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    assert claude_settings.load(str(home.parent / "project"), {"HOME": str(home)}).claude_sandbox


def test_broken_settings_count_as_empty(home: Path) -> None:
    (home / ".claude" / "settings.json").write_text("{not json")
    found = claude_settings.load(str(home.parent / "project"), {"HOME": str(home)})
    assert found.rules == {"deny": [], "ask": [], "allow": []} and not found.claude_sandbox


@pytest.fixture
def cli(home: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process whose command line looks like a Claude Code started with permission flags."""
    argv = ["bash", "-c", "sleep 30; :", "claude", "-p", "go", "--allowedTools", "Bash(npm test) Bash(ls:*),Read",
            "Bash(make)", "--disallowedTools=Bash(git push:*)", "--settings",
            json.dumps({"permissions": {"ask": ["Bash(docker:*)"]}})]
    proc = subprocess.Popen(argv)
    deadline = time.monotonic() + 10
    while b"--allowedTools" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():  # until it has exec'd
        assert time.monotonic() < deadline
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait()


def test_rules_from_the_running_clis_command_line(home: Path, cli: subprocess.Popen[bytes]) -> None:
    found = claude_settings.load(str(home.parent / "project"), {"HOME": str(home), "CLAUDE_PID": str(cli.pid)})
    assert found.rules["allow"] == [("npm test", "command line"), ("ls:*", "command line"), ("make", "command line")]
    assert found.rules["deny"] == [("git push:*", "command line")]
    assert found.rules["ask"] == [("docker:*", "--settings")]
