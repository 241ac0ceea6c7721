"""The command Claude Code is handed instead of the model's: the original, run inside bubblewrap.

A short pure-shell line; outside the sandbox it runs only shell builtins and bwrap by its absolute
path (no PATH lookup; no second interpreter, but for a network allowlist's proxy,
``store/sandbox/netproxy.py``). bwrap reads its arguments from a file baton wrote in
``.baton/run/`` (``--args``), which nothing in the sandbox can write. The original command is one
single-quoted argument, evaluated only inside, after the person's shell snapshot is sourced there as
Claude Code sources it outside, so functions and aliases work. The inner shell reports its final
directory on a pipe the command cannot see; the outer shell ``cd``s there and returns the inner exit
status, so ``cd`` persists and exit codes are kept. If bwrap cannot start, nothing runs.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Sequence

# with a network allowlist, start the forwarder to baton's proxy first (store/sandbox/netproxy.py)
PROXY = ("if [ -n \"${__baton_proxy-}\" ]; then exec 8< <(\"$__baton_python\" -I -S -c \"$__baton_forwarder\" "
         "\"$__baton_proxy\" 3>&-); read -r -t 10 -u 8 __baton_i; exec 8<&-; fi; "
         "unset __baton_proxy __baton_python __baton_forwarder __baton_i; ")
INNER = ("exec 3>&4 4>&-; __baton_cmd=$1; shift; " + PROXY +
         "if [ -n \"${__baton_snapshot-}\" ]; then source \"$__baton_snapshot\" 2>/dev/null || true; fi; "
         "unset __baton_snapshot; \\builtin shopt -u extglob 2>/dev/null || true; "
         "eval \"$__baton_cmd\" 3>&-; __baton_rc=$?; \\builtin pwd -P >&3 2>/dev/null; exit $__baton_rc")
# what `baton once` starts its command with inside the sandbox: the proxy's forwarder, then the argv
ONCE_INNER = PROXY + "exec \"$@\""
# Claude Code runs `bash -c 'source <snapshot> ... eval <command> ...'`: take the snapshot from there
SNAPSHOT = ("__baton_s=${BASH_EXECUTION_STRING-}; __baton_s=${__baton_s#source }; __baton_s=${__baton_s%% *}; "
            "case $__baton_s in */shell-snapshots/*) ;; *) __baton_s= ;; esac; ")
MARK = "__baton_snapshot=$__baton_s "


def quote(text: str) -> str:
    """``text`` as one single-quoted shell word (as ``shlex.quote`` always would)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def sandboxed(command: str, bwrap: str, args_file: str, started: str, proxy: Sequence[str] = ()) -> str:
    """The line that runs ``command`` in the sandbox whose arguments are in ``args_file``; it touches
    ``started`` (outside the sandbox) just before. ``proxy``: the command line that starts
    ``netproxy`` (python, its path, its sockets, bwrap, the hosts, ``--``) for a network allowlist."""
    launch = " ".join(quote(a) for a in (proxy or [bwrap]))
    run = (f"{MARK}{launch} --args 7 --chdir \"$PWD\" -- /bin/bash -c {quote(INNER)} bash {quote(command)} "
           f"7<{quote(args_file)} 4>&1 1>&5 5>&-")
    return (f"{SNAPSHOT}\\builtin : >|{quote(started)}; {{ __baton_d=$( {run} ); __baton_rc=$?; }} 5>&1; "
            "\\builtin unset __baton_s; "
            "\\builtin test -n \"$__baton_d\" && \\builtin cd -- \"$__baton_d\"; \\builtin unset __baton_d; "
            "(\\builtin exit $__baton_rc)")


def original_of(rewritten: str) -> str:
    """The model's command inside a line made by :func:`sandboxed` ('' when it is not one)."""
    head = f" -c {quote(INNER)} bash "
    at = rewritten.find(head)
    if at < 0 or not rewritten.startswith(SNAPSHOT):
        return ""
    rest, out, i = rewritten[at + len(head):], [], 0
    while rest.startswith("'", i):
        end = rest.find("'", i + 1)
        if end < 0:
            return ""
        out.append(rest[i + 1:end])
        i = end + 1
        if not rest.startswith("\"'\"", i):
            break
        out.append("'")
        i += 3
    return "".join(out)


def write_args(path: str, args: List[str]) -> None:
    """bwrap's ``--args`` file: the arguments, each ended by a NUL byte (created once, never rewritten)."""
    view = memoryview(b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
