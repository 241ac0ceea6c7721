"""The command Claude Code is handed instead of the model's: a short line that runs it in bubblewrap.

What a person is shown (when Claude Code asks them) is that line: it sources a script baton wrote
in ``.baton/run/`` (which nothing in a sandbox can write) and hands it the model's command verbatim,
in a quoted here-document on descriptor 9, so the command's own stdin is untouched::

    . '/project/.baton/run/<id>.sh' 9<<'BATON_CMD'
    <the model's command, as it wrote it>
    BATON_CMD

The script runs only shell builtins and bwrap (or baton's proxy or broker, which start bwrap) by
absolute paths: no PATH lookup. bwrap reads its arguments from a file baton wrote (``--args``). The
command is evaluated only inside, after the person's shell snapshot is sourced there as Claude Code
sources it outside, so functions and aliases work. The inner shell reports its final directory on a
pipe the command cannot see; the script ``cd``s there and returns the inner exit status, so ``cd``
persists and exit codes are kept. If bwrap cannot start, nothing runs.
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
            "case $__baton_s in */shell-snapshots/*) ;; *) __baton_s= ;; esac")
READ = "__baton_c=; IFS= \\builtin read -r -d '' __baton_c <&9 || :; __baton_c=${__baton_c%$'\\n'}"
DELIMITER = "BATON_CMD"
SCRIPT_SUFFIX = ".sh"


def quote(text: str) -> str:
    """``text`` as one single-quoted shell word (as ``shlex.quote`` always would)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def delimiter(command: str) -> str:
    """The here-document's end line: ``BATON_CMD``, numbered when the command holds that text."""
    found, n = DELIMITER, 0
    while found in command:
        n += 1
        found = f"{DELIMITER}_{n}"
    return found


def sandboxed(command: str, script_file: str) -> str:
    """The line Claude Code runs: ``script_file`` (see :func:`script`) sourced with ``command`` on fd 9."""
    end = delimiter(command)
    return f". {quote(script_file)} 9<<'{end}'\n{command}\n{end}"


def script(launch: Sequence[str], args_file: str, started: str) -> str:
    """The script :func:`sandboxed` sources: it reads the command from fd 9, touches ``started``
    (outside the sandbox) and runs the command in bwrap, whose arguments are in ``args_file``.
    ``launch``: bwrap's path, or the command line of the proxy or broker that starts it."""
    run = (f"__baton_snapshot=$__baton_s {' '.join(quote(a) for a in launch)} --args 7 --chdir \"$PWD\" -- "
           f"/bin/bash -c {quote(INNER)} bash \"$__baton_c\" 7<{quote(args_file)} 9<&- 4>&1 1>&5 5>&-")
    return "\n".join([
        "# baton: run the command on fd 9 in baton's sandbox (store/sandbox/rewrite.py)",
        READ,
        SNAPSHOT,
        f"\\builtin : >|{quote(started)}",
        f"{{ __baton_d=$( {run} ); __baton_rc=$?; }} 5>&1",
        "\\builtin unset __baton_s __baton_c",
        "\\builtin test -n \"$__baton_d\" && \\builtin cd -- \"$__baton_d\"; \\builtin unset __baton_d",
        "(\\builtin exit $__baton_rc)",
        ""])


def script_of(args_file: str) -> str:
    """The script's path for a run whose bwrap arguments are in ``args_file`` (``<id>.args``)."""
    return os.path.splitext(args_file)[0] + SCRIPT_SUFFIX


def original_of(rewritten: str) -> str:
    """The model's command inside a line made by :func:`sandboxed` ('' when it is not one)."""
    head, newline, rest = rewritten.partition("\n")
    at = head.rfind(" 9<<'")
    if not newline or not head.startswith(". '") or at < 0 or not head.endswith("'"):
        return ""
    end = head[at + 5:-1]
    if not rest.endswith("\n" + end):
        return ""
    command = rest[:-len(end) - 1]
    return command if delimiter(command) == end else ""


def write_file(path: str, data: bytes) -> None:
    """Create ``path`` with ``data`` (mode 0600); never rewrites an existing file."""
    view = memoryview(data)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_args(path: str, args: List[str]) -> None:
    """bwrap's ``--args`` file: the arguments, each ended by a NUL byte (created once, never rewritten)."""
    write_file(path, b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args))


def write_script(path: str, launch: Sequence[str], args_file: str, started: str) -> None:
    """The script :func:`sandboxed` sources (created once, never rewritten)."""
    write_file(path, script(launch, args_file, started).encode("utf-8", "surrogateescape"))
