"""The person's own Claude Code settings that baton must honour: Bash permission rules, and whether
Claude Code's own sandbox is on (baton's cannot run inside it).

Sources, as Claude Code 2.1.328 reads them: managed settings, the user's settings, the project's
checked-in settings (its allow rules only once the person trusted the project), the project's
local settings, and the running CLI's ``--settings``, ``--allowedTools`` and ``--disallowedTools``
(read from ``/proc/$CLAUDE_PID/cmdline``). Unreadable or malformed files count as empty.

A ``--settings`` file named by a relative path is read from the project's root, where Claude Code
was started, never from the hook's current folder (it follows the model's ``cd``, and a settings
file planted there could turn baton's sandbox off). Every file read here is one the model must not
write (:func:`settings_files`): the gate refuses it and the sandbox binds it read-only.
"""

from __future__ import annotations

import os

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

MANAGED = "/etc/claude-code/managed-settings.json"
KINDS = ("deny", "ask", "allow")
ALLOWED_FLAGS = ("--allowedTools", "--allowed-tools")
DENIED_FLAGS = ("--disallowedTools", "--disallowed-tools")


class PersonRules:
    """Bash rules by kind, each as (the text inside ``Bash(...)``, '' for all of Bash; where it came from);
    ``monitor``: where each kind of rule naming the whole Monitor tool came from."""

    def __init__(self) -> None:
        self.rules: Dict[str, List[Tuple[str, str]]] = {kind: [] for kind in KINDS}
        self.monitor: Dict[str, List[str]] = {kind: [] for kind in KINDS}
        self.claude_sandbox = False

    def add(self, kind: str, rule: Any, source: str) -> None:
        pattern = bash_pattern(rule)
        if pattern is not None:
            self.rules[kind].append((pattern, source))
        elif isinstance(rule, str) and rule.strip() in ("Monitor", "Monitor()", "Monitor(*)"):
            self.monitor[kind].append(source)

    def for_tool(self, tool: str) -> PersonRules:
        """The rules to judge ``tool``'s command by. Claude Code 2.1.328 matches a Monitor's command against the
        ``Bash(...)`` rules, but an allow rule naming all of Bash does not allow it and one naming all of Monitor
        does (seen); deny and ask rules naming all of Bash are kept for it, to be safe."""
        if tool != "Monitor":
            return self
        view = PersonRules()
        view.claude_sandbox = self.claude_sandbox
        for kind in KINDS:
            kept = [(p, s) for p, s in self.rules[kind] if p != "" or kind != "allow"]
            view.rules[kind] = kept + [("", s) for s in self.monitor[kind]]
        return view


def bash_pattern(rule: Any) -> Optional[str]:
    """The pattern of a Bash rule ('' for every command), ``None`` for a rule about another tool."""
    if not isinstance(rule, str):
        return None
    rule = rule.strip()
    if rule in ("Bash", "Bash()", "Bash(*)"):
        return ""
    if rule.startswith("Bash(") and rule.endswith(")"):
        return str(rule[5:-1].strip())
    return None


def _read(path: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _apply(found: PersonRules, settings: Mapping[str, Any], source: str, allow_ok: bool = True) -> None:
    permissions = settings.get("permissions")
    if isinstance(permissions, dict):
        for kind in KINDS:
            rules = permissions.get(kind)
            if isinstance(rules, list) and (kind != "allow" or allow_ok):
                for rule in rules:
                    found.add(kind, rule, source)
    sandbox = settings.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
        found.claude_sandbox = True


def trusted(project: str, config_dir: str, home: str) -> bool:
    """Did the person accept the trust dialog for ``project`` (Claude Code's ``~/.claude.json``)?"""
    data = _read(os.path.join(home, ".claude.json")) or _read(os.path.join(config_dir, ".claude.json"))
    projects = data.get("projects")
    entry = projects.get(project) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True


def cli_arguments(pid: str) -> List[str]:
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as handle:
            raw = handle.read()
    except (OSError, ValueError):
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def split_rule_list(text: str) -> List[str]:
    """``'Bash(npm test) Bash(ls:*),Read'`` -> its rules (spaces and commas outside parentheses separate)."""
    rules, current, depth = [], "", 0
    for ch in text:
        depth += 1 if ch == "(" else -1 if ch == ")" and depth else 0
        if depth == 0 and ch in ", ":
            rules.append(current)
            current = ""
        else:
            current += ch
    return [r.strip() for r in [*rules, current] if r.strip()]


def _apply_cli(found: PersonRules, argv: List[str], project: str) -> None:
    kind = None
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in ALLOWED_FLAGS or name in DENIED_FLAGS:
            kind = "allow" if name in ALLOWED_FLAGS else "deny"
            if eq:
                for rule in split_rule_list(value):
                    found.add(kind, rule, "command line")
            continue
        if name == "--settings" and (eq or i + 1 < len(argv)):
            text = value if eq else argv[i + 1]
            settings = _parse_settings(text, project)
            _apply(found, settings, "--settings")
        if arg.startswith("-"):
            kind = None
        elif kind is not None:
            for rule in split_rule_list(arg):
                found.add(kind, rule, "command line")


def _parse_settings(text: str, project: str) -> Dict[str, Any]:
    if text.lstrip().startswith("{"):
        try:
            data = jsonc.loads(text)
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return _read(os.path.join(project, os.path.expanduser(text)))


def cli_settings_files(argv: List[str], project: str) -> List[str]:
    """The files the CLI's ``--settings`` names (inline JSON aside), as :func:`_parse_settings` reads them."""
    found = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name == "--settings" and (eq or i + 1 < len(argv)):
            text = value if eq else argv[i + 1]
            if text and not text.lstrip().startswith("{"):
                found.append(os.path.join(project, os.path.expanduser(text)))
    return found


def settings_files(project: str, env: Mapping[str, str]) -> List[str]:
    """Every settings file :func:`load` reads for ``project``: the person's, which decide whether
    baton's sandbox runs and which commands run unasked, so no tool may write them."""
    home = env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    found = [os.path.join(config_dir, "settings.json"), os.path.join(project, ".claude", "settings.json"),
             os.path.join(project, ".claude", "settings.local.json")]
    if env.get("CLAUDE_PID"):
        found += cli_settings_files(cli_arguments(env["CLAUDE_PID"]), project)
    return found


def load(project: str, env: Mapping[str, str]) -> PersonRules:
    """Every Bash rule the person's Claude Code would apply to a command in ``project``."""
    home = env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    found = PersonRules()
    _apply(found, _read(MANAGED), "managed")
    _apply(found, _read(os.path.join(config_dir, "settings.json")), "user")
    shared = _read(os.path.join(project, ".claude", "settings.json"))
    wants_allow = bool((shared.get("permissions") or {}).get("allow")) if isinstance(shared.get("permissions"),
                                                                                    dict) else False
    _apply(found, shared, "project", allow_ok=wants_allow and trusted(project, config_dir, home))
    _apply(found, _read(os.path.join(project, ".claude", "settings.local.json")), "local")
    if env.get("CLAUDE_PID"):
        _apply_cli(found, cli_arguments(env["CLAUDE_PID"]), project)
    return found
