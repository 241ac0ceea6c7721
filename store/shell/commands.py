"""What known commands do, for ``shellscan``: read-only commands, wrappers, cd, assignments, git.

``dispatch(cmd, name, args)`` reports through ``cmd`` (a ``contract.Command``) what the command
``name args`` does: files it writes (``cmd.write``), why its effect is unknown (``cmd.opaque``),
the commands it runs in turn (``cmd.aside().run``, ``cmd.code``) and a change of directory
(``cmd.chdir``). File writers are in ``shellwrite``, commands that run code in ``shellprog``;
a command known nowhere is opaque. A computed argument that could expand to an option (``$X``,
``*``) makes any command opaque whose options can write, run or redirect something.
"""

from __future__ import annotations

import re

from store.shell import programs as shellprog
from store.shell import writers as shellwrite
from store.shell.words import Word, computed, getopt, lit

TYPE_CHECKING = False
if TYPE_CHECKING:

    from store.shell.contract import Command, Handler

PURE = frozenset(
    """ls cat head tail more grep egrep fgrep zgrep wc echo pwd which type whereis stat du df cmp comm cut tr
    paste column fold nl jq date printenv true false test [ basename dirname realpath readlink md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum b2sum cksum sum od hexdump strings id whoami uname hostname ps sleep
    seq yes : tac rev expand unexpand fmt pr join expr nproc arch tty groups who uptime free locale getconf base32
    base64 diff diff3 zcat bzcat xzcat dirs jobs wait shift unset return exit break continue ulimit umask set
    help compgen times numfmt tput pgrep pidof""".split()
)
SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/usr/local/sbin/",
               "/opt/homebrew/bin/")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
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
    "timeout": ("sk", ("signal=", "kill-after="), ()),
    "stdbuf": ("ioe", ("input=", "output=", "error="), ()),
    "xargs": ("aEdILnPs", ("arg-file=", "delimiter=", "eof=", "replace=", "max-lines=", "max-args=",
                           "max-procs=", "max-chars=", "process-slot-var="), ("-p", "--interactive")),
}


def dispatch(cmd: Command, name: str, args: list[Word]) -> None:
    """Report what ``name args`` does; ``name`` is the program's base name."""
    if name in PURE:
        return
    handler = _RELAXED.get(name) or (shellprog.python if shellprog.PYTHON.match(name) else None)
    if handler is None:
        word = computed(args)
        if word is not None:
            cmd.opaque(f"{name} has a computed argument: {word.raw}")
        handler = _HANDLERS.get(name) or shellwrite.HANDLERS.get(name) or shellprog.HANDLERS.get(name)
        handler = handler or shellprog.family(name)
    if handler is None:
        cmd.opaque(f"unknown command '{name}'")
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
            cmd.opaque(f"git {option} may run programs")
        elsewhere = elsewhere or option in ("--git-dir", "--work-tree")
    if k >= len(args):
        return
    sub, rest = args[k].literal() or "", args[k + 1 :]
    if _git_reads(sub, [w.literal() or "" for w in rest]):
        _git_outputs(cmd, sub, rest)
    elif sub in ("add", "commit") and not elsewhere and len(where) < 2:
        cmd.write(where[0] if where else lit("."), ".git")
    else:
        cmd.opaque(f"git {sub or args[k].raw} may rewrite files")


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
        if re.match(r"--outp(?:ut?)?(?:=|\Z)", text):
            target = word.tail(text.index("=") + 1) if "=" in text else rest[k + 1] if k + 1 < len(rest) else None
            if target is not None:
                cmd.write(target)
        elif sub == "grep" and text.startswith(("-O", "--open-files-in-pager")):
            cmd.opaque("git grep -O runs a program")


def _cd(cmd: Command, name: str, args: list[Word]) -> None:
    ops = [w for w in args if not re.fullmatch(r"-[LPe@]+|--", w.literal() or "")]
    physical = any("P" in (w.literal() or "") for w in args[: len(args) - len(ops)])
    first = (ops[0].literal() or "") if ops else ""
    if name == "popd" or (name == "pushd" and (not ops or first[:1] in ("+", "-"))) or first == "-":
        cmd.lost()
    else:
        cmd.chdir(ops[0] if ops else None, physical)


def _declare(cmd: Command, name: str, args: list[Word]) -> None:
    for word in args:
        m = _ASSIGN.match(word.raw)
        if m:
            cmd.assign(m.group(1))


def _setters(cmd: Command, name: str, args: list[Word]) -> None:
    """read, mapfile, getopts, printf -v, let: they may assign variables named in their arguments."""
    texts = [w.literal() or "" for w in args]
    if name == "printf":
        texts = [t for t, prev in zip(texts, [""] + texts) if prev == "-v"]
    for text in texts:
        for m in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", text):
            cmd.assign(m.group())


def _shopt(cmd: Command, name: str, args: list[Word]) -> None:
    for word in args:
        if word.literal() in ("lastpipe", "expand_aliases"):
            cmd.opaque(f"shopt {word.literal()} changes how commands run")


def _wrapper(cmd: Command, name: str, args: list[Word]) -> None:
    shorts, longs, bad = _WRAPPERS[name]
    opts, rest = getopt(args, shorts, longs, stop=True, optional="eil" if name == "xargs" else "")
    for option, value in opts:
        if option in bad:
            cmd.opaque(f"{name} {option} is not analysed")
        elif name == "time" and option in ("-o", "--output") and value is not None:
            cmd.write(value)
    while name in ("sudo", "env") and rest and (m := _ASSIGN.match(rest[0].raw)):
        cmd.assign(m.group(1))
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
        cmd.run(rest[0], rest[1:])


_RELAXED: dict[str, Handler] = {
    "cd": _cd, "pushd": _cd, "popd": _cd, "baton": shellprog.baton, "export": _declare, "local": _declare,
    "declare": _declare, "typeset": _declare, "readonly": _declare, "read": _setters, "mapfile": _setters,
    "readarray": _setters, "getopts": _setters, "printf": _setters, "let": _setters, "shopt": _shopt,
}
_HANDLERS: dict[str, Handler] = {
    **{name: _wrapper for name in _WRAPPERS}, "command": _builtin, "builtin": _builtin, "exec": _builtin,
    "git": _git,
}
