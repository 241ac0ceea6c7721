"""Where data may go while ``allow_hosts`` rules are active: host and MCP server matching.

A destination must be allowed by every ``allow_hosts`` rule. Host names are compared lower case,
without a trailing dot or IPv6 brackets, IDNA-encoded; ``*.example.com`` matches any subdomain
but not ``example.com`` itself. MCP servers are compared as Claude Code names them in tool
names (``mcp__<server>__<tool>``). A network proxy or a sandbox can use :func:`host_policy`
directly: ``.hosts`` for its allowlist, ``.refusing(host)`` for one connection.
"""

from __future__ import annotations

from store.base.values import Frozen
from store.plan.hostnames import normal_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence, Tuple

    from store.plan.rules import Rule


class HostPolicy(Frozen):
    """Where data may go while ``allow_hosts`` rules are active: a destination must be allowed by
    every such rule. ``hosts`` are the rules' patterns (for a proxy's allowlist)."""

    __slots__ = ("rules",)

    def __init__(self, rules: Tuple[Rule, ...]) -> None:
        self.rules = rules

    @property
    def hosts(self) -> Tuple[str, ...]:
        return tuple(dict.fromkeys(h for rule in self.rules for h in rule.value))

    def refusing(self, host: str) -> Optional[Rule]:
        """The first rule that does not allow ``host`` (a name or an address), or None."""
        host = normal_host(host)
        for rule in self.rules:
            if not any(host_matches(host, pattern) for pattern in rule.value):
                return rule
        return None

    def refusing_mcp(self, server: str) -> Optional[Rule]:
        """The first rule whose ``allow_mcp`` does not name the MCP ``server``, or None."""
        from store.base.wild import fnmatchcase

        for rule in self.rules:
            names = rule.options.get("allow_mcp", ())
            if not any(fnmatchcase(mcp_name(server), mcp_name(n)) for n in names):
                return rule
        return None


def host_policy(rules: Sequence[Rule]) -> Optional[HostPolicy]:
    """The destination allowlist, or None when no allow_hosts rule is active."""
    found = tuple(rule for rule in rules if rule.kind == "allow_hosts")  # rules.of_kind, without importing it
    return HostPolicy(found) if found else None


def host_matches(host: str, pattern: str) -> bool:
    """``pattern`` is a host name or address, ``*.example.com`` (any subdomain, not the domain itself)
    (:func:`store.plan.hostnames.host_pattern`); compared on :func:`normal_host` forms."""
    from fnmatch import fnmatchcase  # on first use: most plans have no host rules

    return fnmatchcase(host, normal_host(pattern))


def mcp_name(name: str) -> str:
    """An MCP server name as Claude Code puts it in tool names (``mcp__<server>__<tool>``)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_*?") else "_" for c in name)
