"""The host a URL, an scp-style address (``user@host:path``) or a bare ``host[:port]`` names.

Strict on purpose: text that two URL parsers could read differently (spaces, control
characters, backslashes, two ``@``, a curl glob in the host) gives ``None``, which the callers
refuse. ``LOCAL`` (``""``) marks a local path or ``file://`` URL: no network.
"""

from __future__ import annotations

from store.plan.hostnames import normal_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

LOCAL = ""
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SCHEME_CHARS = frozenset(_LETTERS + "0123456789+.-")  # RFC 3986: a letter, then these
_NAME_CHARS = frozenset(_LETTERS + "0123456789._~%-")  # a host name (after IDNA)
_ADDRESS_CHARS = frozenset("0123456789ABCDEFabcdef:.")  # an IPv6 or IPv4 address


def _is_scheme(text: str) -> bool:
    return bool(text) and text[0] in _LETTERS and all(c in _SCHEME_CHARS for c in text)


def _is_host(text: str) -> bool:
    return bool(text) and (all(c in _NAME_CHARS for c in text) or all(c in _ADDRESS_CHARS for c in text))


def url_host(text: str, glob: bool = False, bare: bool = False) -> Optional[str]:
    """The host of ``text`` (lower case, IDNA), ``LOCAL`` for file:// or None when it cannot be told.
    Without a scheme the text is read as ``[user@]host[:port][/path]`` (as curl and ssh do);
    ``glob``: curl expands ``{a,b}`` and ``[1-3]`` in URLs, so a host holding them is unknown."""
    text = text.strip()
    if not text or "\\" in text or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return None
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if not _is_scheme(scheme):
            return None
        if scheme.lower() == "file":
            return LOCAL
    else:
        rest = text
    netloc = rest[:min([at for at in map(rest.find, "/?#") if at >= 0] or [len(rest)])]
    if netloc.count("@") > 1:
        return None
    hostport = netloc.rpartition("@")[2]
    if glob and ("{" in hostport or (("[" in hostport or "]" in hostport) and not hostport.startswith("["))):
        return None
    if hostport.startswith("["):
        end = hostport.find("]")
        host = hostport[1:end] if end > 0 else ""
    else:
        host = hostport.split(":", 1)[0] if not (bare and hostport.count(":") > 1) else hostport
    if not host:
        return None
    host = normal_host(host)
    return host if _is_host(host) else None


def scp_host(text: str) -> Optional[str]:
    """``[user@]host:path`` (or a URL) names a remote host; a local path gives ``LOCAL``."""
    if "://" in text:
        return url_host(text)
    if text.startswith(("/", "./", "../", "~")) or ":" not in text:
        return LOCAL
    head = text.split(":", 1)[0] if not text.startswith("[") else text[: text.find("]") + 1]
    if "/" in head:
        return LOCAL  # a relative path with a colon later on
    return url_host(head, bare=True)
