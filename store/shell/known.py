"""What known commands do, for the scan: read-only commands, wrappers, and git.

``dispatch(cmd, name, args)`` reports through ``cmd`` (a ``contract.Command``) what the command
``name args`` does: files it writes (``cmd.write``), why its effect is unknown (``cmd.opaque``),
the commands it runs in turn (``cmd.aside().run``, ``cmd.code``) and a change of directory
(``cmd.chdir``). Shell builtins are in ``builtin``, file writers in ``writers``, commands that
run code in ``programs``; a command known nowhere runs code the scan cannot see. A computed
argument that could expand to an option (``$X``, ``*``) makes any command opaque whose options
can write, run or redirect something.

``PURE`` lists the commands with no way to write a file or run other code, whatever their
arguments: each was checked for options that write (``sort -o``), run programs (``less``'s
``LESSOPEN``, ``rg --pre``), evaluate arithmetic or subscripts (``test -v``, ``printf -v``),
change the shell (``set``, ``unset``, ``jobs -x``, ``compgen -C``) or the system (``date -s``,
``hostname NAME``); those have handlers instead. The environment variables they read are
covered by ``environment``.
"""

from __future__ import annotations

from store.base import chars
from store.shell.variables import word_value
from store.shell.words import Word, computed, getopt, lit

TYPE_CHECKING = False
if TYPE_CHECKING:

    from store.shell.contract import Command, Handler

PURE = frozenset(
    """ls cat head tail more grep egrep fgrep zgrep wc echo pwd which type whereis stat du df cmp comm cut tr
    paste column fold nl jq printenv true false basename dirname realpath readlink md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum b2sum cksum sum od hexdump strings id whoami uname ps sleep
    seq yes : tac rev expand unexpand fmt pr join expr nproc arch tty groups who uptime free locale getconf base32
    base64 diff diff3 zcat bzcat xzcat dirs shift return exit break continue ulimit umask help times numfmt
    tput pgrep pidof caller""".split()
)
SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/usr/local/sbin/",
               "/opt/homebrew/bin/")
_SCHEME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_GIT_READS = frozenset(
    """status log diff show rev-parse ls-files grep blame shortlog describe rev-list cat-file ls-tree ls-remote
    merge-base name-rev show-ref for-each-ref whatchanged diff-tree diff-files diff-index var check-ignore
    check-attr count-objects help version cherry show-branch annotate range-diff""".split()
)
_GIT_SUBS = {"stash": ("list", "show"), "worktree": ("list",), "notes": ("list", "show"),
             "submodule": ("status", "summary"), "reflog": ("", "show", "exists"), "remote": ("", "show", "get-url")}
_BRANCH_WRITES = frozenset(("-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy", "-f", "--force", "-u",
                            "--set-upstream-to", "--unset-upstream", "--edit-description", "-t", "--track"))
_CONFIG_READS = frozenset(("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                           "--get-colorbool"))
_CONFIG_WRITES = frozenset(("--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e", "--rename-section",
                            "--remove-section"))
_INPUT = Word([("input", "<input>")], [], "xargs input")
# wrapper: (option letters taking a value, long options ("name=" takes one), options not analysed)
_WRAPPERS = {
    "sudo": ("CDghpRrTtUu", ("chdir=", "chroot=", "edit", "shell", "login", "user=", "group="),
             ("-D", "--chdir", "-R", "--chroot", "-e", "--edit", "-s", "--shell", "-i", "--login")),
    "env": ("uCSP", ("chdir=", "split-string=", "unset="), ("-C", "--chdir", "-S", "--split-string", "-P")),
    "time": ("fo", ("output=", "format="), ()),
    "nice": ("n", ("adjustment=",), ()),
    "nohup": ("", (), ()),
    "setsid": ("", ("fork", "wait", "ctty"), ()),
    "ionice": ("cnpP", ("class=", "classdata=", "pid=", "pgid=", "uid="), ("-p", "--pid", "-P", "--pgid", "-u")),
    "timeout": ("sk", ("signal=", "kill-after="), ()),
    "stdbuf": ("ioe", ("input=", "output=", "error="), ()),
    "xargs": ("aEdILnPs", ("arg-file=", "delimiter=", "eof=", "replace=", "max-lines=", "max-args=",
                           "max-procs=", "max-chars=", "process-slot-var="), ("-p", "--interactive")),
}


def dispatch(cmd: Command, name: str, args: list[Word]) -> None:
    """Report what ``name args`` does; ``name`` is the program's base name."""
    if name in PURE:
        return
    handler = _relaxed(name)
    if handler is None:
        word = computed(args)
        if word is not None:
            cmd.opaque(f"{name} has a computed argument: {word.raw}")
        handler = _HANDLERS.get(name)
    if handler is None:  # the other programs' handlers load only when a command needs one
        from store.shell import builtin, programs, writers

        handler = (builtin.HANDLERS.get(name) or writers.HANDLERS.get(name) or programs.HANDLERS.get(name)
                   or programs.family(name))
    if handler is None:
        cmd.runs_code(f"unknown command '{name}'")
    else:
        handler(cmd, name, args)


def system_path(text: str) -> bool:
    """``text`` names a program in a system directory (so its base name says what it is)."""
    return any(text.startswith(d) and "/" not in text[len(d) :] for d in SYSTEM_DIRS)


def _git(cmd: Command, name: str, args: list[Word]) -> None:
    """Read-only subcommands are read-only; add and commit write only .git; the rest are opaque."""
    k, where, elsewhere = 0, [], False
    while k < len(args) and (text := args[k].literal() or "").startswith("-"):
        k += 1
        option = text.split("=", 1)[0]
        if option in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env") and "=" not in text:
            if option == "-C" and k < len(args):
                where.append(args[k])
            k += 1
        if option in ("-c", "--config-env") or (option == "--exec-path" and "=" in text):
            cmd.runs_code(f"git {option} may run programs")
        elsewhere = elsewhere or option in ("--git-dir", "--work-tree")
    if k < len(args) and args[k].literal() is None:
        cmd.opaque(f"git subcommand is computed: {args[k].raw}")
        return
    if k >= len(args):
        return
    sub, rest = args[k].literal() or "", args[k + 1 :]
    texts = [w.literal() or "" for w in rest]
    if _git_reads(sub, texts):
        _git_outputs(cmd, sub, rest)
    elif sub in ("add", "commit") and not elsewhere and len(where) < 2:
        cmd.write(where[0] if where else lit("."), ".git")
    else:
        cmd.opaque(f"git {sub} may rewrite files")


def _git_reads(sub: str, texts: list[str]) -> bool:
    options = {text.split("=", 1)[0] for text in texts}
    operands = [t for t in texts if not t.startswith("-")]
    first = operands[0] if operands else ""
    if sub == "branch":
        return not options & _BRANCH_WRITES and (not operands or bool(options & {"-l", "--list"}))
    if sub == "tag":
        return not texts or bool(options & {"-l", "--list"})
    if sub == "config" and (options & _CONFIG_READS or first in ("get", "list")):
        return True
    if sub == "config":
        return len(operands) == 1 and not options & _CONFIG_WRITES
    return sub in _GIT_READS or first in _GIT_SUBS.get(sub, ("-",))


def _git_outputs(cmd: Command, sub: str, rest: list[Word]) -> None:
    for k, word in enumerate(rest):
        text = word.literal() or ""
        if sub in ("ls-remote", "remote") and (text.startswith(("--upload-pack", "-u", "--exec"))
                                                 or _url_runs(text)):
            cmd.runs_code(f"git {sub} {text[:40]} runs a program")
        if sub == "help" and text in ("-w", "--web", "-i", "--info"):
            cmd.runs_code("git help opens a viewer program")
        if _output_option(text):
            target = word.tail(text.index("=") + 1) if "=" in text else rest[k + 1] if k + 1 < len(rest) else None
            if target is not None:
                cmd.write(target)
        elif sub == "grep" and text.startswith(("-O", "--open-files-in-pager")):
            cmd.opaque("git grep -O runs a program")


def _wrapper(cmd: Command, name: str, args: list[Word]) -> None:
    shorts, longs, bad = _WRAPPERS[name]
    opts, rest = getopt(args, shorts, longs, stop=True, optional="eil" if name == "xargs" else "")
    for option, value in opts:
        if option in bad:
            cmd.opaque(f"{name} {option} is not analysed")
        elif name == "time" and option in ("-o", "--output") and value is not None:
            cmd.write(value)
    while name in ("sudo", "env") and rest and (m := chars.split_assignment(rest[0].raw)):
        tail = rest[0].tail(m[2])
        cmd.assign(m[0], None if tail is None else word_value(tail))
        rest = rest[1:]
    rest = rest[1:] if name == "timeout" or (name == "env" and rest and rest[0].literal() == "-") else rest
    if name == "xargs":
        marks = [v.text if v else "{}" for o, v in opts if o in ("-I", "-i", "--replace")]
        rest = [_INPUT if any(mark in w.text for mark in marks) else w for w in rest or [lit("echo")]] + [_INPUT]
    if rest:
        cmd.aside().run(rest[0], rest[1:])


def _builtin(cmd: Command, name: str, args: list[Word]) -> None:
    """command, builtin, exec: run the next word in this shell (exec replaces it)."""
    opts, rest = getopt(args, "a" if name == "exec" else "", stop=True)
    if name == "command" and any(o in ("-v", "-V") for o, _ in opts):
        return
    if rest:
        cmd.run(rest[0], rest[1:], functions=False)


# builtins read even when an argument is computed (``cd "$d"``), and the programs handled the same way
_RELAXED_BUILTINS = frozenset(("cd", "pushd", "popd", "export", "local", "declare", "typeset", "readonly", "read",
                               "getopts", "printf", "let", "test", "[", "unset", "wait", "date"))


def _relaxed(name: str) -> Handler | None:
    if name in _RELAXED_BUILTINS:
        from store.shell.builtin import HANDLERS

        return HANDLERS[name]
    if name == "baton" or is_python(name):
        from store.shell import programs

        return programs.baton if name == "baton" else programs.python
    return None


def is_python(name: str) -> bool:
    """A Python interpreter's name: ``(?:python|pypy)(?:[0-9]+(?:\\.[0-9]+)?)?\\Z``."""
    for prefix in ("python", "pypy"):
        if name.startswith(prefix):
            major, dot, minor = name[len(prefix) :].partition(".")
            return (not major and not dot) or (chars.is_digits(major) and (not dot or chars.is_digits(minor)))
    return False


_HANDLERS: dict[str, Handler] = {
    **{name: _wrapper for name in _WRAPPERS}, "command": _builtin, "builtin": _builtin, "exec": _builtin,
    "git": _git,
}


def _url_runs(text: str) -> bool:
    """A git transport helper that runs a program (``ext::CMD``, ``fd::``, any ``helper::``):
    ``[A-Za-z][A-Za-z0-9+.-]*::`` at the start."""
    return text[:1] in chars.LETTERS and text.startswith("::", chars.span(text, 1, _SCHEME))


def _output_option(text: str) -> bool:
    """git's ``--output`` as it may be shortened: ``--outp(?:ut?)?(?:=|\\Z)`` at the start."""
    return any(text == o or text.startswith(o + "=") for o in ("--output", "--outpu", "--outp"))
