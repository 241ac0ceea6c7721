"""The plan's ``rules``: job-wide invariants, each with an ``id``, a ``reason`` and one kind.

Kinds: ``deny_bash`` (a command pattern), ``protect_branches`` (branch globs, ``local``),
``deny_content`` (``files`` globs and a ``pattern``), ``check_after_write`` (``"default"`` or
glob -> command, ``seconds``) and ``allow_hosts`` (host globs, ``allow_mcp`` server names).
:func:`parse_rules` validates them with the one-line errors every plan error gets. The helpers
at the end give other parts (the gate, a sandbox) what they need without knowing the plan's
shape: :func:`read_only_globs`, :func:`checks`; ``store.plan.hosts`` gives the host allowlist.
"""

from __future__ import annotations

from store.base.errors import USAGE, BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

KINDS = ("deny_bash", "protect_branches", "deny_content", "check_after_write", "allow_hosts")
OPTIONS = {"protect_branches": ("local",), "check_after_write": ("seconds",), "allow_hosts": ("allow_mcp",)}
CHECK_DEFAULT_SECONDS = 10
CHECK_MAX_SECONDS = 60
# built-in checks (``"default"``): glob -> checker name, run by store.monitor.checks
DEFAULT_CHECKS: Tuple[Tuple[str, str], ...] = (
    ("**/*.py", "python"), ("**/*.json", "json"), ("**/*.toml", "toml"), ("**/*.sh", "shell"),
    ("**/*.bash", "shell"), ("**/*.ipynb", "notebook"),
)
BUILTIN_CHECKERS = ("python", "json", "toml", "shell", "notebook")
_BY_SUFFIX = {"py": "python", "json": "json", "toml": "toml", "sh": "shell", "bash": "shell", "ipynb": "notebook"}


class RuleError(BatonError):
    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


class Rule(Frozen):
    """One rule: ``kind`` names what ``value`` holds; ``options`` are the kind's extra fields."""

    __slots__ = ("deny_bash", "reason", "id", "kind", "value", "options")

    def __init__(self, deny_bash: str = "", reason: str = "", id: str = "", kind: str = "deny_bash",
                 value: Any = None, options: Optional[Dict[str, Any]] = None) -> None:
        self.deny_bash, self.reason, self.id = deny_bash, reason, id
        self.kind = kind
        self.value: Any = deny_bash if kind == "deny_bash" and value is None else value
        self.options = dict(options or {})

    @property
    def name(self) -> str:
        """How refusals name the rule."""
        return self.id or self.kind

    @property
    def branches(self) -> Tuple[str, ...]:
        return tuple(self.value) if self.kind == "protect_branches" else ()

    @property
    def local(self) -> bool:
        return bool(self.options.get("local"))


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__)


def _strings(value: Any, where: str, check: Any = None) -> Tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise RuleError(f"{where}: expected a non-empty list of non-empty strings, got {_kind(value)}")
    for item in value:
        if check is not None and not check(item):
            raise RuleError(f"{where}: {item!r} is not valid")
    return tuple(value)


def parse_rules(raw: Any, source: str) -> Tuple[Rule, ...]:
    """Validate the plan's ``rules`` list; raise :class:`RuleError` (exit 2) naming the rule and field."""
    if not isinstance(raw, list):
        raise RuleError(f"{source}: field 'rules': expected a list, got {_kind(raw)}")
    rules: List[Rule] = []
    seen: Dict[str, int] = {}
    for i, item in enumerate(raw):
        rule = _rule(item, f"{source}: rule {i + 1}")
        if rule.id and rule.id in seen:
            raise RuleError(f"{source}: rule {i + 1}: field 'id': duplicate of rule {seen[rule.id] + 1}")
        seen[rule.id] = i
        rules.append(rule)
    return tuple(rules)


def _rule(item: Any, where: str) -> Rule:
    if not isinstance(item, dict):
        raise RuleError(f"{where}: expected an object, got {_kind(item)}")
    kinds = [k for k in KINDS if k in item]
    if not kinds:
        raise RuleError(f"{where}: needs one of the fields {', '.join(KINDS)}")
    if len(kinds) > 1:
        raise RuleError(f"{where}: has both {kinds[0]!r} and {kinds[1]!r}; write one rule for each")
    kind = kinds[0]
    known = ("id", "reason", kind, *OPTIONS.get(kind, ()))
    for key in item:
        if key not in known:
            raise RuleError(f"{where}: field {key!r}: unknown field for a {kind} rule (known: {', '.join(known)})")
    rid, reason = item.get("id", ""), item.get("reason", "")
    if not isinstance(rid, str) or not isinstance(reason, str):
        raise RuleError(f"{where}: fields 'reason' and 'id' must be strings")
    if kind != "deny_bash" and (not rid.strip() or not reason.strip()):  # deny_bash: optional, as in 0.1.0
        missing = "id" if not rid.strip() else "reason"
        raise RuleError(f"{where}: field {missing!r}: every {kind} rule needs an id and a reason")
    if rid and (rid != rid.strip() or len(rid) > 200 or any(ord(c) < 32 for c in rid)):
        raise RuleError(f"{where}: field 'id': one line of at most 200 characters without surrounding spaces")
    value, options = _value(kind, item, f"{where}: field {kind!r}"), _options(kind, item, where)
    return Rule(value if kind == "deny_bash" else "", reason, rid, kind, value, options)


def _value(kind: str, item: Dict[str, Any], where: str) -> Any:
    value = item[kind]
    if kind == "deny_bash":
        if not isinstance(value, str) or not value.strip():
            raise RuleError(f"{where}: expected a non-empty command pattern")
        return value
    if kind == "protect_branches":
        return _strings(value, where, lambda b: not any(c.isspace() or c in "~^:\\" for c in b))
    if kind == "allow_hosts":
        from store.plan.hostnames import host_patterns  # only for a plan with hosts

        return host_patterns(value, where, RuleError)
    if kind == "deny_content":
        return _content(value, where)
    return _checks(value, where)


def _content(value: Any, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise RuleError(f"{where}: expected an object with 'files' and 'pattern', got {_kind(value)}")
    for key in value:
        if key not in ("files", "pattern"):
            raise RuleError(f"{where}.{key}: unknown field (known: files, pattern; put 'reason' on the rule)")
    files = _strings(value.get("files"), f"{where}.files")
    pattern = value.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise RuleError(f"{where}.pattern: expected a non-empty regular expression")
    import re

    try:
        compiled = re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise RuleError(f"{where}.pattern: not a valid regular expression: {exc}") from None
    return {"files": files, "pattern": pattern, "regex": compiled}


def _checks(value: Any, where: str) -> Tuple[Tuple[str, str], ...]:
    if value == "default":
        return DEFAULT_CHECKS
    if not isinstance(value, dict) or not value:
        raise RuleError(f"{where}: expected \"default\" or an object mapping globs to commands, got {_kind(value)}")
    out = []
    for glob, command in value.items():
        if not glob.strip() or not isinstance(command, str) or not command.strip():
            raise RuleError(f"{where}.{glob}: expected a command string (\"default\" for the built-in check)")
        if command == "default":
            builtin = _BY_SUFFIX.get(glob.rsplit(".", 1)[-1] if "." in glob else "", "")
            if not builtin:
                raise RuleError(f"{where}.{glob}: no built-in check for this glob (built-in: .py .json .toml .sh "
                                ".bash .ipynb)")
            command = builtin
        out.append((glob, command))
    return tuple(out)


def _options(kind: str, item: Dict[str, Any], where: str) -> Dict[str, Any]:
    options: Dict[str, Any] = {}
    if "local" in item:
        if not isinstance(item["local"], bool):
            raise RuleError(f"{where}: field 'local': expected true or false")
        options["local"] = item["local"]
    if "seconds" in item:
        seconds = item["seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= CHECK_MAX_SECONDS:
            raise RuleError(f"{where}: field 'seconds': expected a number of seconds from 1 to {CHECK_MAX_SECONDS}")
        options["seconds"] = float(seconds)
    if "allow_mcp" in item:
        options["allow_mcp"] = _strings(item["allow_mcp"], f"{where}: field 'allow_mcp'")
    return options


def of_kind(rules: Sequence[Rule], kind: str) -> Tuple[Rule, ...]:
    return tuple(rule for rule in rules if rule.kind == kind)


def read_only_globs(rules: Sequence[Rule]) -> Tuple[str, ...]:
    """Globs (project-relative, as in ``writes``) whose files Bash must not write: deny_content's
    files, whose new content baton cannot see when Bash writes them. For a sandbox's read-only mounts."""
    return tuple(dict.fromkeys(glob for rule in of_kind(rules, "deny_content") for glob in rule.value["files"]))


def checks(rules: Sequence[Rule]) -> Tuple[Tuple[str, str, float, str], ...]:
    """(glob, command or built-in checker name, seconds, rule id) for every check_after_write entry."""
    return tuple((glob, command, float(rule.options.get("seconds", CHECK_DEFAULT_SECONDS)), rule.name)
                 for rule in of_kind(rules, "check_after_write") for glob, command in rule.value)
