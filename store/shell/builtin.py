"""Shell builtins that change the shell itself, for the scan: cd, variables, options, traps, jobs.

Each handler reports through a ``contract.Command``: the directory change (``cd``), the
variables a builtin sets and the values it evaluates as code (``declare -i``, ``let``, ``read``
and ``printf -v`` into a subscript, ``test -v``; see ``variables``), the options that change how
later commands run (``set -k``, ``shopt -s cdable_vars``) and the code a builtin runs
(``trap`` actions, ``jobs -x``, ``compgen -C/-F/-W``, ``mapfile -C``).
"""

from __future__ import annotations

from store.base import chars
from store.shell.variables import word_value
from store.shell.words import LITERAL, Word, getopt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from store.shell.contract import Command, Handler

# shopt options that only change globbing, matching, messages or the interactive shell
_SHOPT_SAFE = frozenset(
    """autocd checkhash checkjobs checkwinsize cmdhist compat31 compat32 compat40 compat41 compat42 compat43
    compat44 complete_fullquote direxpand dirspell dotglob extglob extquote failglob force_fignore globasciiranges
    globskipdots globstar gnu_errfmt histappend histreedit histverify hostcomplete huponexit inherit_errexit
    interactive_comments lithist localvar_inherit localvar_unset login_shell mailwarn no_empty_cmd_completion
    nocaseglob nocasematch noexpand_translation nullglob progcomp progcomp_alias promptvars
    shift_verbose sourcepath varredir_close xpg_echo errexit nounset pipefail xtrace verbose noclobber noglob
    notify monitor hashall braceexpand errtrace functrace emacs vi ignoreeof interactive-comments histexpand
    history noexec nolog onecmd privileged allexport""".split()
)
_SET_UNSAFE_LETTERS = frozenset("kP")  # -k: assignments anywhere in a command; -P: cd resolves links
_DECLARE_VALUED = "aAfFgiIlnprtux"  # declare's flags (none takes a value)


def _cd(cmd: Command, name: str, args: list[Word]) -> None:
    ops = [w for w in args if not _cd_option(w.literal() or "")]
    physical = any("P" in (w.literal() or "") for w in args[: len(args) - len(ops)])
    first = (ops[0].literal() or "") if ops else ""
    if name == "popd" or (name == "pushd" and (not ops or first[:1] in ("+", "-"))) or first == "-":
        cmd.lost()
    else:
        cmd.chdir(ops[0] if ops else None, physical)


def _declare(cmd: Command, name: str, args: list[Word]) -> None:
    """declare, typeset, local, export, readonly: flags, then NAME[=VALUE] words."""
    flags: set[str] = set()
    k = 0
    while k < len(args) and letters_option(args[k].literal() or ""):
        flags.update(args[k].literal()[1:] if (args[k].literal() or "")[0] == "-" else "")  # type: ignore[index]
        k += 1
    if "n" in flags:
        cmd.opaque(f"{name} -n makes a name refer to another variable")
        return
    if flags & {"f", "F"}:
        return  # functions: listed or exported, not assigned
    for word in args[k:]:
        if word.literal() == "--":
            continue
        _declared(cmd, name, word, flags)


def _declared(cmd: Command, name: str, word: Word, flags: set[str]) -> None:
    """One NAME[=VALUE] word: bash parses it after quote removal, so ``"PATH=$x"`` assigns PATH."""
    head = word.parts[0] if word.parts else ("", "")
    m = chars.split_assignment(word.raw) or (chars.split_assignment(head[1]) if head[0] in LITERAL else None)
    text = word.literal()
    where = f"{name} {word.raw}"[:60]
    if m is None:  # NAME, or a computed word
        if text is not None:
            cmd.vars.name_use(text, where)
            base = text.split("[", 1)[0]
            if flags & {"a", "A"}:
                cmd.vars.arrays.add(base)
            if "i" in flags:
                cmd.vars.integers.add(base)
            if name in ("local", "declare", "typeset"):
                cmd.assign(base, "")  # a new, empty variable
        else:
            cmd.vars.name_word(word, where)
            cmd.opaque(f"{name} assigns a variable whose name is computed: {word.raw}")
        return
    var, sub, end = m
    if sub is not None:
        cmd.vars.expression(sub[1:-1], where, expanded=not word.quoted())
    value_word = word.tail(end)
    value = value_word.literal() if value_word is not None else None
    compound = word.raw[end : end + 1] == "("  # name=( ... ), not a quoted string
    if flags & {"a", "A"}:
        cmd.vars.arrays.add(var)
    if "i" in flags:
        cmd.vars.integers.add(var)
        if value_word is not None:
            cmd.vars.arith_word(value_word, where)
    if not compound and (value is None or value.lstrip().startswith("(")):
        cmd.vars.compound.append((var, where))  # a string in parentheses is a compound assignment to an array
    cmd.assign(var, None if value_word is None or compound else word_value(value_word))


def _names(cmd: Command, name: str, words: list[Word], array: bool = False) -> None:
    """``words`` name variables the builtin sets from data (read, mapfile, getopts, printf -v)."""
    for word in words:
        cmd.vars.name_word(word, f"{name} {word.raw}"[:60])
        text = word.literal()
        if text is not None:
            base = text.split("[", 1)[0]
            if array:
                cmd.vars.arrays.add(base)
            cmd.assign(base)


def _read(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, "adinNptu")
    arrays = [v for option, v in opts if option == "-a" and v is not None]
    _names(cmd, name, arrays, array=True)
    _names(cmd, name, ops)
    if not ops and not arrays:
        cmd.assign("REPLY")


def _mapfile(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, "dnOsuCc")
    if any(option == "-C" for option, _ in opts):
        cmd.unknown(f"{name} -C runs a callback for each line")
    _names(cmd, name, ops[:1], array=True)


def _getopts(cmd: Command, name: str, args: list[Word]) -> None:
    _names(cmd, name, args[1:2])


def _printf(cmd: Command, name: str, args: list[Word]) -> None:
    opts, _ = getopt(args, "v", stop=True)
    _names(cmd, name, [v for option, v in opts if option == "-v" and v is not None])
    if args and args[0].literal() is None:  # "$x" may be -v: the next word then names a variable
        _maybe_option(cmd, name, args)


def _maybe_option(cmd: Command, name: str, args: list[Word]) -> None:
    if args[0].split:
        cmd.vars.name_word(args[0], f"{name} {args[0].raw}"[:60])  # may split into "-v NAME"
    if len(args) > 1:
        cmd.vars.name_word(args[1], f"{name} {args[1].raw}"[:60])


def _wait(cmd: Command, name: str, args: list[Word]) -> None:
    opts, _ = getopt(args, "p")
    _names(cmd, name, [v for option, v in opts if option == "-p" and v is not None])


def _let(cmd: Command, name: str, args: list[Word]) -> None:
    for word in args:
        cmd.vars.arith_word(word, f"let {word.raw}"[:60])
        start = chars.span_space(word.text, 0)
        end = chars.name_end(word.text, start)
        if end > start and chars.arith_assign_end(word.text, end) > 0:
            cmd.assign(word.text[start:end], "0")


def _unset(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args)
    if any(option == "-f" for option, _ in opts):
        for word in ops:
            cmd.forget(word.literal())
        return
    if any(option == "-n" for option, _ in opts):
        cmd.opaque("unset -n changes a name reference")
    _names(cmd, name, ops)


def _test(cmd: Command, name: str, args: list[Word]) -> None:
    """test and [: only ``-v NAME`` evaluates anything (a subscript); -eq compares plain numbers."""
    for k, word in enumerate(args):
        text = word.literal()
        if text == "-v" and k + 1 < len(args):
            cmd.vars.name_word(args[k + 1], f"{name} -v")
        elif text is None:  # may be (or split into) -v and a name
            _maybe_option(cmd, name, args[k:])


def _set(cmd: Command, name: str, args: list[Word]) -> None:
    k = 0
    while k < len(args) and (text := args[k].literal() or "") and text[0] in "-+" and text not in ("-", "--"):
        k += 1
        if set(text[1:]) & _SET_UNSAFE_LETTERS:
            cmd.opaque(f"set {text} changes how commands run")
        if "o" in text[1:] and k < len(args):  # -o NAME (also at the end of a cluster: -euo pipefail)
            option = args[k].literal()
            k += 1
            if option is None or option not in _SHOPT_SAFE:
                cmd.opaque(f"set -o {args[k - 1].raw} changes how commands run")
    if k < len(args) or any(a.literal() in ("-", "--") for a in args):
        cmd.assign("1")  # positional parameters


def _shopt(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args)
    if not {option for option, _ in opts} & {"-s", "-u"}:
        return  # prints or queries
    for word in ops:
        if word.literal() not in _SHOPT_SAFE:
            cmd.opaque(f"shopt {word.raw} changes how commands run")


def _trap(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, stop=True)
    if {option for option, _ in opts} & {"-l", "-p", "-P"} or len(ops) < 2:
        return  # lists, prints, or resets one signal
    action = ops[0].literal()
    if action is None:
        cmd.unknown(f"trap runs computed code: {ops[0].raw}")
    elif action not in ("", "-"):
        cmd.later(action)


def _jobs(cmd: Command, name: str, args: list[Word]) -> None:
    for k, word in enumerate(args):
        if word.literal() == "-x" and k + 1 < len(args):
            cmd.run(args[k + 1], args[k + 2 :])
            return
        if not (word.literal() or "").startswith("-"):
            return


def _compgen(cmd: Command, name: str, args: list[Word]) -> None:
    opts, _ = getopt(args, "AGWFCXPSo")
    for option, value in opts:
        if option in ("-C", "-F"):
            cmd.unknown(f"{name} {option} runs a command")
        elif option == "-W" and value is not None:
            text = value.literal()
            if text is None:
                cmd.unknown(f"{name} -W expands a computed word list")
            elif "$" in text or "`" in text:
                cmd.aside().code(": " + text)  # the word list is expanded: its substitutions run


def _date(cmd: Command, name: str, args: list[Word]) -> None:
    opts, _ = getopt(args, "dfrs", ("date=", "file=", "reference=", "set="))
    if any(option in ("-s", "--set") for option, _ in opts):
        cmd.opaque("date -s sets the system clock")


def _hostname(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, "F", ("file=",))
    if ops or any(option in ("-F", "--file", "-b", "--boot") for option, _ in opts):
        cmd.opaque("hostname with a name sets the host name")


HANDLERS: dict[str, Handler] = {
    "cd": _cd, "pushd": _cd, "popd": _cd, "export": _declare, "local": _declare, "declare": _declare,
    "typeset": _declare, "readonly": _declare, "read": _read, "mapfile": _mapfile, "readarray": _mapfile,
    "getopts": _getopts, "printf": _printf, "wait": _wait, "let": _let, "unset": _unset, "test": _test, "[": _test,
    "set": _set, "shopt": _shopt, "trap": _trap, "jobs": _jobs, "compgen": _compgen, "date": _date,
    "hostname": _hostname,
}


def _cd_option(text: str) -> bool:
    """An option of cd, pushd or popd: ``-[LPe@]+|--``."""
    return text == "--" or (len(text) > 1 and text[0] == "-" and all(c in "LPe@" for c in text[1:]))


def letters_option(text: str) -> bool:
    """``[-+][A-Za-z]+``: a word of option letters, as declare and set take them."""
    return len(text) > 1 and text[0] in "-+" and all(c in chars.LETTERS for c in text[1:])
