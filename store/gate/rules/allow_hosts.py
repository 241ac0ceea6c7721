"""allow_hosts and external operations: where a call sends data, whether the plan allows it, how many leave.

A Bash command's destinations come from ``netcmds``; WebFetch's from its URL; an MCP tool
(``mcp__<server>__<tool>``) is judged by its server against ``allow_mcp``. While an
``allow_hosts`` rule is active, a destination outside it, or one that cannot be told from the
command, is refused, and so is a network command whose environment the command changes
(``http_proxy=``, ``npm_config_registry=``, ``GIT_SSH_COMMAND=``). Each operation that leaves
the machine counts once toward ``limits.external_ops`` (counted by the caller when the call
passes): one per network command in a Bash call, one per WebFetch or MCP call.
"""

from __future__ import annotations

from store.base.regex import lazy
from store.gate.call import refuse
from store.gate.urls import url_host
from store.plan.hosts import host_policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional, Sequence, Tuple

    from store.gate.call import Call
    from store.plan.hosts import HostPolicy
    from store.plan.plan import Plan
    from store.shell import Scan

_NET_ENV = lazy(r"(?i)proxy|\A(?:npm_config_|yarn_|pip_|PIP_|TWINE_|UV_|POETRY_|CARGO_|GIT_|GH_|GITHUB_|DOCKER_"
                r"|SSH_|CURL_|WGET|HOME\Z|XDG_CONFIG_HOME\Z|HOSTALIASES\Z|RES_OPTIONS\Z|LOCALDOMAIN\Z)")


class Egress:
    """What one call sends out: ``count`` operations, and a refusal when the plan forbids one."""

    def __init__(self, count: int = 0, refusal: Optional[str] = None) -> None:
        self.count, self.refusal = count, refusal


def bash(call: Call, plan: Plan, command: str, scan: Scan, step: str) -> Optional[str]:
    """The refusal for a destination the ``allow_hosts`` rules do not allow, or None; the operations
    that leave the machine are counted on ``call.external`` (``limits.external_ops``)."""
    sent = sent_by(scan, host_policy(plan.rules), call.project, call.home, call.env)
    call.external = sent.count
    return sent.refusal


def sent_by(scan: Scan, policy: Optional[HostPolicy], project: str, home: str, env: Mapping[str, str]) -> Egress:
    from store.gate.netcmds import Context, destinations  # Bash only: WebFetch and MCP calls need none of it

    count, refusal = 0, None
    for inv in scan.invocations:
        found: List[Tuple[Optional[str], str]] = []
        for cwd in inv.cwds:
            found.extend(destinations(inv, Context(cwd, project, home, env)))
        if not found:
            continue
        count += not (inv.program == "/dev/tcp" and inv.argv[1:] == (None,))  # a computed redirection: maybe
        if policy is not None and refusal is None:
            refusal = _judge(policy, found, scan.assigned)
    return Egress(count, refusal)


def _judge(policy: HostPolicy, found: Sequence[Tuple[Optional[str], str]], assigned: Sequence[str]) -> Optional[str]:
    changed = [name for name in assigned if _NET_ENV.search(name)]
    first = policy.rules[0]
    if changed:
        return refuse("allow-hosts", f"baton denied this command: it sets {changed[0]}, which can change where "
                                     f"a network command connects, and the job's rule {first.name} allows only "
                                     f"{_hosts(policy)}: {first.reason}.")
    for host, what in found:
        if host is None:
            return refuse("allow-hosts", f"baton denied this command: {what}, so baton cannot check it against the "
                                         f"job's rule {first.name} (only {_hosts(policy)}): {first.reason}. Name the "
                                         "destination literally.")
        rule = policy.refusing(host)
        if rule is not None:
            return refuse("allow-hosts", f"baton denied this command: {what} connects to {host}, and the job's rule "
                                         f"{rule.name} allows only {', '.join(rule.value)}: {rule.reason}.")
    return None


def _hosts(policy: HostPolicy) -> str:
    return ", ".join(policy.hosts)


def web_fetch(tool_input: Mapping[str, Any], policy: Optional[HostPolicy], tool: str = "WebFetch") -> Egress:
    """A WebFetch, or (``tool`` Monitor) a Monitor's WebSocket: ``tool_input["url"]``'s host must be allowed."""
    url = tool_input.get("url")
    if policy is None:
        return Egress(1)
    if not isinstance(url, str):
        return Egress(1, refuse("payload", f"baton denied this {tool}: it has no url, so it cannot be checked."))
    host = url_host(url)
    first = policy.rules[0]
    if not host:
        return Egress(1, refuse("allow-hosts", f"baton denied this {tool}: baton cannot tell the host of "
                                               f"{url[:80]!r}, and the job's rule {first.name} allows only "
                                               f"{_hosts(policy)}: {first.reason}."))
    rule = policy.refusing(host)
    if rule is not None:
        return Egress(1, refuse("allow-hosts", f"baton denied this {tool}: {host} is not in the job's rule "
                                               f"{rule.name}, which allows only {', '.join(rule.value)}: "
                                               f"{rule.reason}."))
    return Egress(1)


def mcp(tool: str, policy: Optional[HostPolicy]) -> Egress:
    """An MCP tool call: ``mcp__<server>__<tool>``; its server must be in ``allow_mcp``."""
    server = mcp_server(tool)
    if policy is None:
        return Egress(1)
    rule = policy.refusing_mcp(server)
    if rule is None:
        return Egress(1)
    named = ", ".join(rule.options.get("allow_mcp", ())) or "no MCP server"
    return Egress(1, refuse("allow-hosts", f"baton denied {tool}: the MCP server {server} is not in the job's rule "
                                           f"{rule.name}, which allows {named} (allow_mcp): {rule.reason}."))


def mcp_server(tool: str) -> str:
    """``mcp__github__create_issue`` -> ``github``; ``mcp__plugin_x_srv__tool`` -> ``plugin_x_srv``."""
    rest = tool[len("mcp__"):] if tool.startswith("mcp__") else tool
    return rest.split("__", 1)[0]
