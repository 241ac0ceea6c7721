"""The one syntax of a host pattern, for a rule's ``allow_hosts`` and a step's ``sandbox.network.allow_hosts``.

A host pattern is a host name (``pypi.org``, IDNA names too), an IPv4 or IPv6 address (brackets
allowed), or ``*.`` and a domain for its subdomains (``*.github.com``: not ``github.com`` itself);
no other wildcard. A pattern that would allow every host (``*``, ``*.*``) is refused: leaving the
allowlist out is how every host is allowed. :func:`normal_host` is the form names are compared in.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Tuple

SYNTAX = 'host names such as "pypi.org", addresses, or "*.github.com" for the subdomains of github.com'
MAX_HOSTS = 200


def normal_host(host: str) -> str:
    """Lower case, no trailing dot, no IPv6 brackets, IDNA-encoded (``bücher.de`` -> ``xn--bcher-kva.de``)."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return host
    return host


def host_pattern(raw: Any) -> str:
    """``raw`` as a host pattern, in its :func:`normal_host` form; raises ``ValueError`` saying why it is
    not one (the caller names the file and the field)."""
    if not isinstance(raw, str) or not raw.strip() or raw != raw.strip():
        raise ValueError(f"expected {SYNTAX}")
    if not raw.strip("*?.[]"):
        raise ValueError(f"{raw!r} would allow every host; name the hosts (without an allowlist every host is "
                         "allowed)")
    wild = raw.startswith("*.")
    host = normal_host(raw[2:] if wild else raw)
    name = all(label and len(label) <= 63 and label.isascii() and all(c.isalnum() or c in "-_" for c in label)
               for label in host.split("."))
    address = not wild and ":" in host and all(c in "0123456789abcdef:." for c in host)
    if not (name or address) or len(host) > 253:
        raise ValueError(f"{raw!r} is not a host pattern: expected {SYNTAX} (a leading \"*.\" is the only wildcard)")
    return f"*.{host}" if wild else host


def host_patterns(raw: Any, where: str, error: Callable[[str], Exception]) -> Tuple[str, ...]:
    """A list of 1 to :data:`MAX_HOSTS` host patterns; ``error(message)`` is raised, naming ``where``."""
    if not isinstance(raw, list) or not raw or len(raw) > MAX_HOSTS:
        raise error(f"{where}: expected a list of 1 to {MAX_HOSTS} {SYNTAX}")
    found = []
    for item in raw:
        try:
            found.append(host_pattern(item))
        except ValueError as exc:
            raise error(f"{where}: {exc}") from None
    return tuple(dict.fromkeys(found))
