"""Where a Bash command sends data: the network destinations of each simple command, read statically.

``destinations(invocation, ...)`` gives ``(host, what)`` pairs: ``host`` is a host name or
address, or ``None`` when it cannot be told from the command (a computed word, a proxy or a
config file that may redirect, a listening socket). Read: curl, wget, HTTPie (http, https,
xh), nc/ncat/netcat, telnet, socat, ssh, scp, sftp, rsync to a remote, bash's /dev/tcp and
/dev/udp, git (push, fetch, pull, clone, ls-remote, remote show/update, archive --remote,
submodule, send-email; named remotes resolved from the repository's config, ``insteadOf``
included), gh, and publishing (npm/pnpm/yarn publish, twine upload, uv/poetry/flit/hatch
publish, cargo publish, gem push, docker/podman push). A program that runs code baton cannot
read counts only through the URLs written in its words. Local paths and file:// are not the
network. Package installs are not read (their indexes come from config the command does not show).
"""

from __future__ import annotations

import os
import re

from store.base.regex import lazy
from store.gate.gitargs import GitCall, Unreadable
from store.gate.remotecmds import options, rsync, scp, ssh
from store.gate.repo import RepoError
from store.gate.urls import LOCAL, url_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    from store.shell import Invocation

    Dest = Tuple[Optional[str], str]

HOLE = "\0"  # a word known only at run time, where publishing tools read their arguments
_URL_IN_TEXT = lazy(r"\b([a-z][a-z0-9+.-]*)://[^\s'\"<>`]+", re.I)
_GIT_NET = frozenset(("push", "fetch", "pull", "clone", "ls-remote", "archive", "remote", "submodule", "send-email",
                      "fetch-pack", "send-pack", "request-pull"))


_CURL_LONGS = ("data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "header", "user-agent", "referer",
               "cookie", "cookie-jar", "output", "user", "request", "max-time", "connect-timeout", "retry", "form",
               "form-string", "upload-file", "proxy", "preproxy", "cacert", "capath", "cert", "key", "write-out",
               "url", "config", "resolve", "connect-to", "doh-url", "range", "continue-at", "dump-header", "trace",
               "trace-ascii", "stderr", "proxy-user", "interface", "limit-rate", "max-filesize", "retry-delay",
               "retry-max-time", "json", "oauth2-bearer", "time-cond", "telnet-option", "quote", "mail-from",
               "mail-rcpt", "output-dir", "expect100-timeout", "ciphers", "cert-type", "key-type", "pass",
               "hostpubmd5", "hostpubsha256", "socks4", "socks4a", "socks5", "socks5-hostname", "unix-socket",
               "abstract-unix-socket", "noproxy", "variable", "aws-sigv4", "happy-eyeballs-timeout-ms")


def _curl(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    opts, ops = options(argv[1:], "AbcCdDeEFHKmoPQrtTuUwxXyYz", _CURL_LONGS)
    out: List[Dest] = []
    for name in ("-K", "--config", "--resolve", "--connect-to", "--unix-socket", "--abstract-unix-socket"):
        if name in opts:
            out.append((None, f"curl {name} may send it elsewhere"))
    for name in ("-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname", "--doh-url"):
        out.extend(_host(value, f"curl {name}") for value in opts.get(name, ()))
    urls = ops + opts.get("--url", [])
    out.extend(_host(url, "curl", glob=True) for url in urls)
    return out


def _wget(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    words = [w for w in argv[1:] if not re.fullmatch(r"-n[a-zA-Z]+", w or "")]
    longs = ("output-document", "output-file", "append-output", "execute", "input-file", "base", "tries", "timeout",
             "wait", "quota", "directory-prefix", "user-agent", "level", "accept", "reject", "domains", "include",
             "exclude", "header", "post-data", "post-file", "body-data", "body-file", "method", "user", "password",
             "config", "referer", "save-cookies", "load-cookies", "ca-certificate", "certificate", "private-key")
    opts, ops = options(words, "OoaeiBtTwQPUlARDIX", longs)
    out: List[Dest] = []
    if set(opts) & {"-e", "--execute", "--config", "-i", "--input-file"}:
        out.append((None, "wget reads commands or addresses from elsewhere"))
    if set(opts) & {"-H", "--span-hosts"}:
        out.append((None, "wget --span-hosts follows links to other hosts"))
    return out + [_host(url, "wget") for url in ops]


def _httpie(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    longs = ("auth", "auth-type", "session", "session-read-only", "output", "verify", "cert", "cert-key", "timeout",
             "print", "pretty", "style", "format-options", "max-redirects", "boundary", "default-scheme", "proxy")
    opts, ops = options(argv[1:], "aAospS", longs)
    if "--proxy" in opts:
        return [(None, "http --proxy sends it through another host")]
    if ops and re.fullmatch(r"[A-Z]+", ops[0]):
        ops = ops[1:]
    if not ops:
        return []
    url = ops[0]
    return [("localhost", "http") if url.startswith(":") else _host(url, str(argv[0]))]


def _nc(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    opts, ops = options(argv[1:], "IiMmOPpqsTVWwXxec", ("proxy", "exec", "sh-exec", "lua-exec", "source"))
    if set(opts) & {"-U", "--unixsock"}:
        return []
    if set(opts) & {"-l", "--listen"}:
        return [(None, f"{argv[0]} -l listens for connections")]
    out = [_host(value, f"{argv[0]} proxy") for name in ("-x", "--proxy") for value in opts.get(name, ())]
    return out + ([_host(ops[0], str(argv[0]), bare=True)] if ops else [])


def _telnet(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    _, ops = options(argv[1:], "beklLnX", ())
    return [_host(ops[0], str(argv[0]), bare=True)] if ops else []


def _socat(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    out: List[Dest] = []
    for word in (str(w) for w in argv[1:] if not str(w).startswith("-")):
        kind, _, rest = word.partition(":")
        kind = kind.upper()
        if kind.endswith("-LISTEN") or kind in ("TCP-L", "UDP-RECV", "UDP-RECVFROM"):
            out.append((None, "socat listens for connections"))
        elif kind in ("TCP", "TCP4", "TCP6", "TCP-CONNECT", "OPENSSL", "SSL", "OPENSSL-CONNECT", "UDP", "UDP4", "UDP6",
                      "UDP-SENDTO", "UDP-CONNECT", "SOCKS4", "SOCKS4A", "SOCKS5", "PROXY", "PROXY-CONNECT"):
            out.append(_host(rest.split(":", 1)[0].split(",", 1)[0], "socat", bare=True))
            if kind.startswith(("SOCKS", "PROXY")):
                out.append(_host(rest.split(":")[1] if rest.count(":") else "", "socat", bare=True))
    return out


def _dev_socket(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    return [(argv[1], f"bash {argv[0]}")] if len(argv) > 1 else [(None, "bash /dev/tcp")]


class Context:
    """What reading a command's destinations may need beyond its words: the repository (git),
    the project and home folders (publishing configuration)."""

    def __init__(self, cwd: Optional[str], project: str, home: str, env: Mapping[str, str]) -> None:
        self.cwd, self.project, self.home, self.env = cwd, project, home, env


def _git(argv: Sequence[Optional[str]], ctx: Context, inv: Invocation) -> List[Dest]:
    from store.gate.gitnet import git_destinations

    try:
        calls = [GitCall(inv, str(ctx.cwd), ctx.env, os.path.basename(str(argv[0])))] if ctx.cwd else None
    except Unreadable as why:
        return [(None, str(why))]
    if calls is None:
        return [(None, "git runs in a folder baton cannot tell")]
    if calls[0].sub not in _GIT_NET:
        return []
    try:
        return git_destinations(calls[0])
    except (Unreadable, RepoError) as why:
        return [(None, str(why))]


def _gh(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    words = [str(w) for w in argv[1:]]
    if not words or words[0] in ("help", "version", "completion", "config", "alias", "extension", "--version",
                                 "--help", "auth"):
        return []
    host = next((w.split("=", 1)[1] for w in words if w.startswith("--hostname=")), None)
    if host is None and "--hostname" in words[:-1]:
        host = words[words.index("--hostname") + 1]
    out: List[Dest] = [(host or "api.github.com", "gh")]
    return out + ([("github.com", "gh")] if words[:2] == ["repo", "clone"] else [])


def _publish(argv: Sequence[Optional[str]], ctx: Context) -> List[Dest]:
    from store.gate.registries import publish_destinations

    return publish_destinations([str(w) for w in argv], ctx)


def _host(text: str, what: str, glob: bool = False, bare: bool = False) -> Dest:
    host = url_host(text, glob=glob, bare=bare)
    return (None, f"{what}: cannot tell the host of {text[:60]!r}") if host is None else (host, what)


TABLE: Dict[str, Callable[[Sequence[Optional[str]], Context], List[Dest]]] = {
    "curl": _curl, "wget": _wget, "http": _httpie, "https": _httpie, "xh": _httpie, "xhs": _httpie, "nc": _nc,
    "ncat": _nc, "netcat": _nc, "telnet": _telnet, "socat": _socat, "ssh": ssh, "scp": scp, "sftp": scp,
    "rsync": rsync, "/dev/tcp": _dev_socket, "/dev/udp": _dev_socket, "gh": _gh,
}
PUBLISHERS = frozenset(("npm", "pnpm", "yarn", "twine", "uv", "poetry", "flit", "hatch", "cargo", "gem", "docker",
                        "podman"))


def destinations(inv: Invocation, ctx: Context) -> List[Dest]:
    """Where ``inv`` sends data; [] when it is not a network command baton knows."""
    program = inv.program
    if program is None:
        return [(None, "the command name is computed")]
    base = os.path.basename(program)
    known = program if program.startswith("/dev/") else base
    if base == "git" or base.startswith("git-"):
        found = _git(inv.argv, ctx, inv) if None not in inv.argv else [(None, "git has a computed argument")]
        return [d for d in found if d[0] != LOCAL]
    handler = TABLE.get(known)
    if base in PUBLISHERS or (base != "gh" and _python_module(inv.argv) == "twine"):
        argv = ("twine", *inv.argv[3:]) if base not in PUBLISHERS else inv.argv
        holes = tuple(HOLE if w is None else w for w in argv)  # a file glob is no destination
        return [d for d in _publish(holes, ctx) if d[0] != LOCAL]
    if handler is not None:
        if None in inv.argv[1:]:
            return [(None, f"{base} has a computed argument")]
        return [d for d in handler(inv.argv, ctx) if d[0] != LOCAL]
    if inv.runner:
        return [d for d in _urls_in(inv.argv) if d[0] != LOCAL]
    return []


def _python_module(argv: Sequence[Optional[str]]) -> Optional[str]:
    if argv and re.match(r"python[0-9.]*\Z", os.path.basename(str(argv[0]))) and len(argv) > 2 and argv[1] == "-m":
        return argv[2]
    return None


def _urls_in(argv: Sequence[Optional[str]]) -> List[Dest]:
    """URLs written inside the words of a program baton cannot read (python -c, node -e ...)."""
    out: List[Dest] = []
    for word in argv[1:]:
        for m in _URL_IN_TEXT.finditer(word or ""):
            out.append(_host(m.group(0), f"a URL in {os.path.basename(str(argv[0]))}'s code"))
    return out
