"""Options of network programs, GNU style, and the destinations of ssh, scp, sftp and rsync.

ssh's jump hosts (``-J``, ``ProxyJump``) are destinations too; a tunnel, another configuration
file or a proxy command (``-L``, ``-R``, ``-D``, ``-W``, ``-F``, ``ProxyCommand``, ``Hostname``)
makes the destination unknown. scp and rsync connect only for an operand naming a remote
(``host:path``, ``host::module``, ``rsync://``, ``scp://``).
"""

from __future__ import annotations

from store.gate.urls import LOCAL, scp_host, url_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    Dest = Tuple[Optional[str], str]


def options(words: Sequence[Optional[str]], valued: str, longs: Tuple[str, ...]) -> Tuple[Dict[str, List[str]],
                                                                                           List[str]]:
    """GNU-style options of ``words`` (all known): {option: [values]}, operands."""
    opts: Dict[str, List[str]] = {}
    ops: List[str] = []
    k = 0
    while k < len(words):
        word = str(words[k])
        k += 1
        if word == "--":
            ops.extend(str(w) for w in words[k:])
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if not eq and name[2:] in longs and k < len(words):
                value, k = str(words[k]), k + 1
            opts.setdefault(name, []).append(value)
        elif word.startswith("-") and len(word) > 1:
            for pos, letter in enumerate(word[1:], 1):
                if letter in valued:
                    value = word[pos + 1 :] or (str(words[k]) if k < len(words) else "")
                    k += 0 if word[pos + 1 :] else 1
                    opts.setdefault("-" + letter, []).append(value)
                    break
                opts.setdefault("-" + letter, []).append("")
        else:
            ops.append(word)
    return opts, ops


_SSH_VALUED = "bBcDEeFIiJLlmOoPpQRSWw"


def ssh(argv: Sequence[Optional[str]], ctx: Any) -> List[Dest]:
    opts, ops = options(argv[1:], _SSH_VALUED, ())
    out = _sshoptions(opts, str(argv[0]))
    return out + ([_host(ops[0], "ssh", bare=True)] if ops else [])


def _sshoptions(opts: Dict[str, List[str]], program: str) -> List[Dest]:
    out: List[Dest] = []
    for name in ("-F", "-L", "-R", "-D", "-W", "-w", "-S"):
        if name in opts:
            out.append((None, f"{program} {name} opens a tunnel or reads another configuration"))
    for jumps in opts.get("-J", []):
        out.extend(_host(jump, f"{program} -J", bare=True) for jump in jumps.split(","))
    for option in opts.get("-o", []):
        key, _, value = option.replace(" ", "=", 1).partition("=")
        key = key.strip().lower()
        if key == "proxyjump":
            out.extend(_host(jump, f"{program} ProxyJump", bare=True) for jump in value.split(","))
        elif key in ("proxycommand", "hostname", "localcommand", "permitlocalcommand", "remoteforward",
                     "localforward", "dynamicforward", "include", "match"):
            out.append((None, f"{program} -o {key} may connect elsewhere or run a command"))
    return out


def scp(argv: Sequence[Optional[str]], ctx: Any) -> List[Dest]:
    program = str(argv[0])
    opts, ops = options(argv[1:], "cDFiJlmoPSXBbRs" if program == "sftp" else "cDFiJloPSX", ())
    out = _sshoptions(opts, program)
    if program == "sftp":
        return out + ([_host(ops[0].split(":", 1)[0] if "://" not in ops[0] else ops[0], "sftp", bare=True)]
                      if ops else [])
    for word in ops:
        host = scp_host(word)
        if host != LOCAL:
            out.append((host, "scp"))
    return out


def rsync(argv: Sequence[Optional[str]], ctx: Any) -> List[Dest]:
    opts, ops = options(argv[1:], "eBfTM", ("rsh", "rsync-path", "exclude", "include", "filter", "files-from",
                                            "exclude-from", "include-from", "password-file", "port", "address",
                                            "chmod", "chown", "temp-dir", "compare-dest", "link-dest", "log-file",
                                            "partial-dir", "backup-dir", "suffix", "timeout", "bwlimit", "out-format"))
    remote = [scp_host(word) for word in ops]
    out: List[Dest] = [(host, "rsync") for host in remote if host != LOCAL]
    if remote and set(opts) & {"-e", "--rsh"}:
        out.append((None, "rsync -e runs a remote shell baton does not read"))
    return out


def _host(text: str, what: str, bare: bool = False) -> Dest:
    host = url_host(text, bare=bare)
    return (None, f"{what}: cannot tell the host of {text[:60]!r}") if host is None else (host, what)
