"""Commands that run code, for the scan: shells, eval, find -exec, interpreters, sed, awk, perl.

Literal code (``bash -c 'STRING'``, ``eval``, ``find -exec``) is analysed in turn; code only known
at run time (``eval "$X"``, ``sh -c "$X"``, a program on standard input) may be any command
(``cmd.unknown``); sed and awk programs are read for commands that write or run programs; a
program that runs code from a file or a string the scan does not read (a script, ``python3 -c``,
``make``, ``pytest``) is a runner (``cmd.runs_code``), with the files its options name as
written (``pytest --junitxml=FILE``). ``baton`` invocations are recorded here too.
"""

from __future__ import annotations

from store.base import chars
from store.shell.words import Word, getopt, is_baton

TYPE_CHECKING = False
if TYPE_CHECKING:

    from store.shell.contract import Command, Handler

_VERSION = frozenset(("--version", "-V", "-v", "--help", "-h", "version", "help"))
_SHELLS = frozenset(("bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"))
_INTERPRETERS = frozenset(
    """node nodejs deno bun ruby irb php lua luajit Rscript R julia tclsh osascript java groovy scala kotlin swift
    elixir erl runghc pwsh powershell fish csh tcsh""".split()
)
_TOOLS = frozenset(
    """make gmake cmake ninja npm npx yarn pnpm pip pip3 pipx uv poetry pytest py.test tox nox cargo go rustc gcc
    g++ cc c++ clang clang++ javac mvn gradle docker podman kubectl terraform ansible ansible-playbook bazel meson
    just rake bundle gem composer dotnet mix""".split()
)
_TOOL_READS = frozenset(("pip list", "pip show", "pip freeze", "pip3 list", "pip3 show", "pip3 freeze", "npm ls",
                         "npm list", "npm view", "go version", "go env", "go list", "cargo tree"))
_LOWER_OR_HYPHEN = frozenset("abcdefghijklmnopqrstuvwxyz-")
_SED_FLAGS_END = frozenset(";\n}")
_SED_LABEL_END = frozenset(";\n")
_NEWLINE = frozenset("\n")
_AWK_SAFE = frozenset(("-F", "-v", "-e", "--field-separator", "--assign", "--source", "-b", "-c", "-n", "-N", "-P",
                       "-r", "-s", "-S", "-t", "-M", "-O", "--posix", "--traditional", "--lint", "--sandbox",
                       "--version", "--help"))


def _is_store(word: Word) -> bool:
    """``python3 <root>/store`` or ``python3 <root>/bin/baton`` (how the sandbox runs ``baton``) is baton."""
    return word.text == "store" or word.endswith("/store") or word.endswith("/store/") or is_baton(word)


def baton(cmd: Command, name: str, args: list[Word]) -> None:
    """The baton CLI writes its own files: recorded in ``Scan.baton`` for the caller to judge.
    ``baton once KEY [--id-from X | --id-json X] [--reuse-key] [--] CMD ...`` runs CMD: it is analysed too."""
    cmd.baton(("baton",) + tuple(w.text for w in args))
    sub = args[0].literal() if args else ""
    if sub is None:
        cmd.opaque(f"baton subcommand is computed: {args[0].raw}")
    elif sub not in ("", "brief", "status", "log", "verify", "--help", "-h", "--version"):
        cmd.readonly = False
    inner = _once_command(args[1:]) if sub == "once" else []
    if inner:
        cmd.aside().run(inner[0], inner[1:])


def _once_command(args: list[Word]) -> list[Word]:
    """The command ``baton once`` runs (nothing for ``--settle`` or ``--help``): where the CLI
    starts it (:mod:`store.base.once_words`), a computed word ending the options."""
    from store.base.once_words import command_start

    start = command_start([w.literal() for w in args])
    return args[start:] if start is not None else []


def family(name: str) -> Handler | None:
    """The handler for a shell, an interpreter or a build tool, by name."""
    if name in _SHELLS:
        return _shell
    if name in _INTERPRETERS:
        return _interpreter
    return _tool if name in _TOOLS else None


def _find(cmd: Command, name: str, args: list[Word]) -> None:
    k = 0
    while k < len(args):
        text = args[k].literal()
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(k + 1, len(args)) if args[j].literal() in (";", "+")), len(args))
            inner = [Word([("found", w.text)], [], w.raw) if "{}" in w.text else w for w in args[k + 1 : end]]
            if inner:
                cmd.aside(elsewhere=text in ("-execdir", "-okdir")).run(inner[0], inner[1:])
            k = end
        elif text == "-delete":
            cmd.opaque("find -delete removes the files it finds")
        elif text in ("-fprint", "-fprint0", "-fprintf", "-fls") and k + 1 < len(args):
            cmd.write(args[k + 1])
        k += 1


def _shell(cmd: Command, name: str, args: list[Word]) -> None:
    k, inline = 0, False
    while k < len(args) and _shell_option(args[k].literal() or ""):
        text = args[k].literal() or ""
        if text in ("--rcfile", "--init-file"):
            cmd.runs_code(f"{name} {text} runs a file")
        inline = inline or (text[0] == "-" and "c" in text[1:] and not text.startswith("--"))
        k += 2 if _takes_value(text) else 1
    rest = args[k + 1 if k < len(args) and args[k].literal() == "--" else k :]
    code = rest[0].literal() if rest else None
    if inline and code is not None:
        cmd.aside().code(code)
    elif inline:
        cmd.unknown(f"{name} -c runs computed code" if rest else f"{name} -c without a command")
    elif rest:
        cmd.runs_code(f"{name} runs a script '{rest[0].text}'")
    else:
        cmd.unknown(f"{name} reads commands from standard input")


def _eval(cmd: Command, name: str, args: list[Word]) -> None:
    texts = [w.literal() for w in args]
    if all(t is not None for t in texts):
        cmd.code(" ".join(t or "" for t in texts), here=True)
    else:
        cmd.unknown("eval runs computed code")


def _source(cmd: Command, name: str, args: list[Word]) -> None:
    cmd.runs_code(f"{name} runs a script '{args[0].text}'" if args else f"{name} without a file")


def python(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, "cmWX", stop=True)
    for option, value in opts:
        if option == "-c":
            cmd.runs_code(f"{name} -c runs inline code")
        if option == "-m":
            cmd.runs_code(f"{name} -m {value.text if value else ''} runs a program that may write files")
            if value is not None and value.literal() == "pytest":
                pytest_outputs(cmd, _module_args(args))
    if any(o in ("-c", "-m") for o, _ in opts):
        return
    if ops and _is_store(ops[0]):
        baton(cmd, "baton", ops[1:])
    elif ops:
        cmd.runs_code(f"{name} runs a script '{ops[0].text}'")
    elif not any(o in ("-V", "--version", "-h", "--help") for o, _ in opts):
        cmd.runs_code(f"{name} reads a program from standard input")


def _module_args(args: list[Word]) -> list[Word]:
    """The arguments after ``-m MODULE`` (or ``-mMODULE``), which go to the module."""
    for k, word in enumerate(args):
        text = word.literal() or ""
        if text == "-m":
            return args[k + 2 :]
        if text.startswith("-m"):
            return args[k + 1 :]
    return []


def _interpreter(cmd: Command, name: str, args: list[Word]) -> None:
    texts = [w.literal() or "" for w in args]
    if texts and all(t in _VERSION for t in texts):
        return
    inline = next((t for t in texts if t in ("-e", "-c", "-E", "--eval", "-p", "--print", "-r", "--run")), None)
    script = next((t for t in texts if not t.startswith("-")), None)
    if inline:
        cmd.runs_code(f"{name} {inline} runs inline code")
    else:
        cmd.runs_code(f"{name} runs a script '{script}'" if script else f"{name} reads a program from standard input")


def _tool(cmd: Command, name: str, args: list[Word]) -> None:
    texts = [w.literal() or "" for w in args]
    sub = next((t for t in texts if t and not t.startswith("-")), "")
    if (texts and all(t in _VERSION for t in texts)) or f"{name} {sub}" in _TOOL_READS:
        return
    cmd.runs_code(f"{name} {sub}".strip() + " runs a program that may write files")
    if name in ("pytest", "py.test"):
        pytest_outputs(cmd, args)


_PYTEST_LONGS = ("junitxml=", "junit-xml=", "resultlog=", "result-log=", "report-log=", "log-file=", "html=",
                 "json-report-file=", "basetemp=", "rootdir=", "override-ini=", "cov-report=", "config-file=",
                 "confcutdir=", "debug", "deselect=", "ignore=", "ignore-glob=", "tb=", "maxfail=", "durations=",
                 "log-level=", "log-cli-level=", "log-format=", "import-mode=", "capture=", "pyargs", "cov=")
_PYTEST_FILES = ("--junitxml", "--junit-xml", "--resultlog", "--result-log", "--report-log", "--log-file", "--html",
                 "--json-report-file", "--basetemp", "--debug")


def pytest_outputs(cmd: Command, args: list[Word]) -> None:
    """The files pytest's options name are written (a report, a log, the temporary folder it
    empties first, the cache under ``--rootdir`` or ``-o cache_dir=``)."""
    for option, value in getopt(args, "cokmpWrn", _PYTEST_LONGS, optional="")[0]:
        if value is None:
            continue
        text = value.literal() or ""
        if option in _PYTEST_FILES:
            cmd.write(value)
        elif option == "--rootdir":
            cmd.write(value, ".pytest_cache")
        elif option in ("-o", "--override-ini") and text.split("=", 1)[0].strip() in ("cache_dir", "junit_logging"):
            tail = value.tail(text.index("=") + 1) if "=" in text else None
            if tail is not None:
                cmd.write(tail)
        elif option == "--cov-report" and ":" in text:
            tail = value.tail(text.index(":") + 1)
            if tail is not None:
                cmd.write(tail)


def _sed(cmd: Command, name: str, args: list[Word]) -> None:
    longs = ("expression=", "file=", "line-length=", "in-place", "sandbox")
    opts, ops = getopt(args, "efl", longs, optional="i")
    names = {option for option, _ in opts}
    scripts = [v.literal() if v else None for option, v in opts if option in ("-e", "--expression")]
    inplace = bool(names & {"-i", "--in-place"})
    if names & {"-f", "--file"}:
        cmd.runs_code("sed -f runs a script file")
    elif not scripts and ops:
        ops = ops[1:] if inplace and ops[0].literal() == "" and len(ops) > 2 else ops  # BSD: sed -i '' SCRIPT
        scripts, ops = [ops[0].literal()], ops[1:]
    if "--sandbox" not in names and any(s is None or sed_writes(s) for s in scripts):
        cmd.runs_code("sed script may write files or run commands")
    for word in ops if inplace else []:
        cmd.write(word)


def sed_writes(script: str) -> bool:
    """The sed script has a w, W or e command, or an s command with a w or e flag."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in "wWe":
            return True
        if c in "/\\":  # an address: /regex/ or \cregexc
            i = _sed_end(script, i + (2 if c == "\\" else 1), script[i + 1 : i + 2] if c == "\\" else "/") + 1
        elif c in "sy":
            delim = script[i + 1 : i + 2]
            if delim in ("", "\n", "\\"):
                return True
            i = _sed_end(script, _sed_end(script, i + 2, delim) + 1, delim) + 1
            flags = script[i : chars.span_not(script, i, _SED_FLAGS_END)]
            if c == "s" and ("w" in flags or "e" in flags):
                return True
        elif c in "aicrR#:btT":  # text, file name, comment or label
            i = chars.span_not(script, i, _SED_LABEL_END if c in ":btT" else _NEWLINE)
        else:
            i += 1
    return False


def _sed_end(script: str, j: int, delim: str) -> int:
    while j < len(script) and script[j] != delim:
        j += 2 if script[j] == "\\" else 1
    return j


def _awk(cmd: Command, name: str, args: list[Word]) -> None:
    longs = ("field-separator=", "assign=", "file=", "source=", "exec=", "include=", "load=")
    opts, ops = getopt(args, "FvfeEilW", longs, optional="dDopL")
    programs = [v.literal() if v else None for option, v in opts if option in ("-e", "--source")]
    for option in sorted({option for option, _ in opts} - _AWK_SAFE):
        cmd.opaque(f"{name} {option} is not analysed")
    if not programs and ops:
        programs = [ops[0].literal()]
    if any(p is None or awk_writes(p) for p in programs):
        cmd.runs_code(f"{name} program may write files or run commands")


def awk_writes(program: str) -> bool:
    """The awk program redirects output, pipes, calls system() or loads code (comparisons count too)."""
    text = _without_strings(program).replace("||", " ")
    if any(c in text for c in ">|@"):
        return True
    at = text.find("system")
    while at >= 0:  # system( as a word of its own: \bsystem\s*\(
        before = text[at - 1] if at else ""
        if not (before.isalnum() or before == "_") and text.startswith("(", chars.span_space(text, at + 6)):
            return True
        at = text.find("system", at + 1)
    return False


def _without_strings(program: str) -> str:
    """The awk program with each string literal emptied to ``""`` (escapes read, a string never
    spanning lines): ``re.sub(r'"(?:[^"\\\\\\n]|\\\\.)*"', '""', program)``."""
    if '"' not in program:
        return program
    out: list[str] = []
    i, n = 0, len(program)
    while i < n:
        j = i + 1
        if program[i] == '"':
            while j < n and program[j] not in '"\n':
                if program[j] == "\\":
                    if j + 1 >= n or program[j + 1] == "\n":
                        break
                    j += 1
                j += 1
            if j < n and program[j] == '"':
                out.append('""')
                i = j + 1
                continue
            j = i + 1
        out.append(program[i])
        i = j
    return "".join(out)


def _perl(cmd: Command, name: str, args: list[Word]) -> None:
    texts = [w.literal() or "" for w in args]
    if texts and all(t in ("-v", "--version", "-V", "-h", "--help") for t in texts):
        return
    k, code, inplace = 0, False, False
    while k < len(args) and texts[k].startswith("-") and texts[k] != "-":
        k += 1
        if texts[k - 1] == "--":
            break
        for pos, letter in enumerate(texts[k - 1][1:], 1):
            if letter in "eE":
                code, k = True, k + (pos + 1 == len(texts[k - 1]))
            inplace = inplace or letter == "i"
            if letter in "eEiIMmFxCdDl0":
                break
    cmd.runs_code("perl -e runs inline code" if code else f"perl runs a script '{texts[k]}'" if k < len(args)
               else "perl reads a program from standard input")
    for word in args[k if code else k + 1 :] if inplace else []:
        cmd.write(word)


HANDLERS: dict[str, Handler] = {
    "find": _find, "eval": _eval, "source": _source, ".": _source, "sed": _sed, "awk": _awk,
    "gawk": _awk, "mawk": _awk, "nawk": _awk, "perl": _perl,
}


def _shell_option(text: str) -> bool:
    """``[-+][A-Za-z]+|--[a-z-]+``: options of bash and sh."""
    if text.startswith("--"):
        return len(text) > 2 and all(c in _LOWER_OR_HYPHEN for c in text[2:])
    return len(text) > 1 and text[0] in "-+" and all(c in chars.LETTERS for c in text[1:])


def _takes_value(text: str) -> bool:
    """A shell option whose value is the next word: ``[-+][A-Za-z]*[oO]|--rcfile|--init-file``."""
    if text in ("--rcfile", "--init-file"):
        return True
    return len(text) > 1 and text[0] in "-+" and text[-1] in "oO" and all(c in chars.LETTERS for c in text[1:])
