"""Which files one Bash command may write: a static scan for the hook that gates the Bash tool.

``scan(command, cwd, home)`` never raises and never executes anything; a command it cannot read
is reported opaque. The ``Scan`` it returns has:

- ``writes``: every path the command may create, truncate, append to, delete, rename or chmod.
  "~", $HOME and $PWD are expanded; relative paths are joined with the directory in effect at
  that point (``cd`` is followed; after a ``cd`` that may have failed both directories count);
  "." components and repeated slashes are dropped but symlinks and ".." are left for the caller
  to resolve. A path may be a directory the write lands in. "-", /dev/null, /dev/stdout,
  /dev/stderr, /dev/stdin, /dev/tty, /dev/fd/N and fd duplications (``>&2``) are not writes.
- ``opaque``: why the effect cannot be known statically (unknown command, inline code, a target
  that uses a variable or a glob, ...); when empty, ``writes`` is complete.
- ``baton``: the argv of each baton invocation (``baton``, ``.../bin/baton``, ``python3 .../store``),
  argv[0] always "baton"; an argument that is not literal appears as written (``$X``).
- ``readonly``: every simple command is known read-only, no writes and nothing opaque.
- ``commands``: the first word of every simple command analysed, as written, in order (one per
  run: a command inside a loop or a function may appear more than once).
"""

from __future__ import annotations

import re

from store.shell import commands as shellcmds
from store.shell import programs as shellprog
from store.shell.grammar import MAX_NEST, Walker, union
from store.shell.lex import tokenize
from store.shell.words import LITERAL, Arith, Redir, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional

    from store.shell.contract import Cwds, Flow, Token

MAX_LENGTH = 100_000
MAX_DEPTH = 10  # nested shells, evals, substitutions and function calls
MAX_WORK = 20_000  # simple commands analysed, loops and calls included
_WRITE_REDIRS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
_NOT_FILES = re.compile(r"/dev/(?:null|stdout|stderr|stdin|tty|fd/[0-9]+)\Z|/proc/self/fd/[0-9]+\Z")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
_SIMPLE_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\Z")
_DANGER = frozenset(
    "PATH HOME PWD OLDPWD CDPATH BASH_ENV ENV SHELLOPTS BASHOPTS PS4 PROMPT_COMMAND TMPDIR PAGER EDITOR "
    "VISUAL LESSOPEN LESSCLOSE".split()
)
_WHY = {"glob": "uses a glob", "var": "uses a variable", "sub": "uses command substitution",
        "psub": "uses process substitution", "arith": "uses arithmetic", "tilde": "uses ~user",
        "found": "is only known at run time", "input": "is only known at run time"}


class TooComplex(Exception):
    """The command has more to analyse than a hook should spend time on."""


class Scan:
    """What a command may write (see the module docstring); immutable."""

    __slots__ = ("writes", "opaque", "baton", "readonly", "commands")

    def __init__(self, writes: tuple[str, ...], opaque: tuple[str, ...], baton: tuple[tuple[str, ...], ...],
                 readonly: bool, commands: tuple[str, ...]) -> None:
        for name, value in zip(self.__slots__, (writes, opaque, baton, readonly, commands)):
            object.__setattr__(self, name, value)

    if TYPE_CHECKING:  # read-only attributes, as type checkers see them

        @property
        def writes(self) -> tuple[str, ...]: ...

        @property
        def opaque(self) -> tuple[str, ...]: ...

        @property
        def baton(self) -> tuple[tuple[str, ...], ...]: ...

        @property
        def readonly(self) -> bool: ...

        @property
        def commands(self) -> tuple[str, ...]: ...

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Scan is immutable")

    def astuple(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scan) and self.astuple() == other.astuple()

    def __hash__(self) -> int:
        return hash(self.astuple())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self.astuple()))
        return f"Scan({fields})"


def scan(command: str, cwd: str, home: str) -> Scan:
    """What ``command`` may write when run by bash in ``cwd`` with $HOME ``home``."""
    try:
        if not isinstance(command, str) or len(command) > MAX_LENGTH:
            return Scan((), ("command too long or not text",), (), False, ())
        result = Result(home)
        try:
            result.code(command, (cwd if isinstance(cwd, str) and cwd.startswith("/") else None,))
        except TooComplex:
            result.note("command too complex to analyse")
        return result.scan()
    except Exception as exc:  # noqa: BLE001 - the contract: an unreadable command is opaque, never an error
        return Scan((), (f"cannot analyse the command ({type(exc).__name__})",), (), False, ())


def clean(path: str) -> str:
    """``path`` without "." components, repeated or trailing slashes (".." is kept: symlinks)."""
    return "/" + "/".join(part for part in path.split("/") if part not in ("", "."))


def logical(path: str) -> str:
    """``path`` with ".." taken lexically, as ``cd`` does without -P."""
    out: list[str] = []
    for part in path.split("/"):
        if part == "..":
            out = out[:-1]
        elif part not in ("", "."):
            out.append(part)
    return "/" + "/".join(out)


class Result:
    """The findings of one scan, shared by every nested command."""

    def __init__(self, home: str) -> None:
        self.home = clean(home) if isinstance(home, str) and home.startswith("/") else None
        self.writes: list[str] = []
        self.opaque: list[str] = []
        self.baton: list[tuple[str, ...]] = []
        self.commands: list[str] = []
        self.readonly = True
        self.functions: dict[str, list[Token]] = {}
        self.depth = 0
        self.nest = 0  # compound commands and nested walks being read (bounds the Python stack)
        self.work = 0

    def dry(self) -> Result:
        return Result("/")

    def scan(self) -> Scan:
        writes, opaque = tuple(dict.fromkeys(self.writes)), tuple(dict.fromkeys(self.opaque))
        readonly = self.readonly and not writes and not opaque
        return Scan(writes, opaque, tuple(self.baton), readonly, tuple(self.commands))

    def note(self, reason: str) -> None:
        self.opaque.append(reason if len(reason) <= 160 else reason[:159] + "\u2026")

    def code(self, text: str, cwds: Cwds) -> Flow:
        toks, problems = tokenize(text)
        for problem in problems:
            self.note(f"cannot parse: {problem}")
        return self.walk(toks, cwds)

    def walk(self, toks: list[Token], cwds: Cwds) -> Flow:
        if self.depth >= MAX_DEPTH:
            self.note("commands nested too deep")
            return cwds, cwds
        self.depth += 1
        self.nest += 1
        try:
            return Walker(self, toks).run(cwds)
        finally:
            self.depth -= 1
            self.nest -= 1

    def subs(self, word: Word | Arith, cwds: Cwds) -> None:
        for toks in word.subs:  # a substitution runs in a subshell: its cd does not leak
            self.walk(toks, cwds)

    def assign(self, name: str) -> None:
        if name in _DANGER or name.startswith(("LD_", "DYLD_", "GIT_", "BASH_FUNC_")):
            self.note(f"assignment to {name} changes how commands run")

    def arith(self, tok: Arith, cwds: Cwds) -> None:
        self.subs(tok, cwds)
        for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)", tok.raw):
            self.assign(m.group(1))

    def redirect(self, redir: Redir, cwds: Cwds) -> None:
        for word in (redir.target, redir.body):
            if word is not None:
                self.subs(word, cwds)
        target = redir.target
        if target is None or redir.op not in _WRITE_REDIRS:
            return
        if redir.op == ">&" and re.fullmatch(r"[0-9]+-?|-", target.literal() or "") is not None:
            return  # duplicates or closes a descriptor
        self.target(target, cwds)

    def value(self, word: Word, cwd: Optional[str]) -> tuple[str | None, str | None]:
        """The text ``word`` expands to in ``cwd`` (only ~, $HOME, $PWD expand), or why it is unknown."""
        if word.braced():
            return None, "uses brace expansion"
        if [kind for kind, _ in word.parts] == ["psub"]:
            return "/dev/fd/63", None  # a pipe to another command, not a file
        out = []
        for kind, text in word.parts:
            name = text if kind == "tilde" else "$" + m.group(1) if (m := _SIMPLE_VAR.match(text)) else ""
            known = self.home if name in ("~", "$HOME") else cwd if name in ("~+", "$PWD") else None
            if kind in LITERAL:
                out.append(text)
            elif known is not None:
                out.append(known)
            else:
                return None, "is relative to an unknown directory" if name in ("~+", "$PWD") else _WHY.get(kind)
        return "".join(out), None

    def target(self, word: Word, cwds: Cwds, child: str = "") -> bool:
        """Record ``word`` (then ``child`` inside it, if given) as written, once per possible cwd;
        False if it names no file (/dev/null, "-", ...)."""
        found = False
        for cwd in cwds:
            text, why = self.value(word, cwd)
            if text and not text.startswith("/"):
                text, why = (cwd + "/" + text, None) if cwd else (None, "is relative to an unknown directory")
            if why:
                self.note(f"write target {why}: {word.raw}")
            path = clean(text + "/" + child if child else text) if text and word.literal() != "-" else "/dev/null"
            if not why and not _NOT_FILES.match(path):
                self.writes.append(path)
            found = found or bool(why) or not _NOT_FILES.match(path)
        return found

    def simple(self, words: list[Word], redirs: list[Redir], cwds: Cwds) -> Flow:
        self.work += 1
        if self.work > MAX_WORK:
            raise TooComplex
        for word in words:
            self.subs(word, cwds)
        for redir in redirs:
            self.redirect(redir, cwds)
        k = 0
        while k < len(words) and (m := _ASSIGN.match(words[k].raw)):
            self.assign(m.group(1))
            k += 1
        if k == len(words):
            return cwds, cwds
        cmd = Command(self, cwds)
        cmd.run(words[k], words[k + 1 :])
        self.readonly = self.readonly and cmd.quiet()
        return (cwds if cmd.cwds_after is None else cmd.cwds_after), cwds


class Command:
    """One simple command under analysis; ``shellcmds`` reports through it what the command does."""

    def __init__(self, result: Result, cwds: Cwds) -> None:
        self.result = result
        self.cwds = cwds
        self.readonly = True
        self.cwds_after: Cwds | None = None
        self.children: list[Command] = []

    def quiet(self) -> bool:
        """Known read-only, and so is every command it ran."""
        return self.readonly and all(child.quiet() for child in self.children)

    def aside(self, elsewhere: bool = False) -> Command:
        """A command this one runs in another process (in an unknown directory if ``elsewhere``)."""
        child = Command(self.result, (None,) if elsewhere else self.cwds)
        self.children.append(child)
        return child

    def write(self, word: Word, child: str = "") -> None:
        if self.result.target(word, self.cwds, child):
            self.readonly = False

    def opaque(self, reason: str) -> None:
        self.readonly = False
        self.result.note(reason)

    def baton(self, argv: tuple[str, ...]) -> None:
        self.result.baton.append(argv)

    def assign(self, name: str) -> None:
        self.result.assign(name)

    def run(self, name: Word, args: list[Word]) -> None:
        """Analyse ``name args`` as a command (wrappers call this for the command they run)."""
        text = name.literal()
        self.result.commands.append(name.raw if text is None else text)
        baton = shellprog.is_baton(name)
        if text is None and not baton:
            self.opaque(f"command name is computed: {name.raw}")
        elif self.result.nest >= MAX_NEST:
            self.opaque("commands nested too deep")
        elif text is not None and text in self.result.functions:
            self.nested(lambda: self.code(self.result.functions[text], here=True))
        elif baton or "/" not in (text or "/") or shellcmds.system_path(text or ""):
            program = "baton" if baton else (text or "").rsplit("/", 1)[-1]
            self.nested(lambda: shellcmds.dispatch(self, program, args))
        else:
            self.opaque(f"runs a local program '{text}'")

    def nested(self, analyse: Callable[[], None]) -> None:
        self.result.nest += 1
        try:
            analyse()
        finally:
            self.result.nest -= 1

    def code(self, code: str | list[Token], here: bool = False) -> None:
        """Analyse shell code run by this command; ``here``: in this shell, so a cd in it persists."""
        before = self.result.readonly
        self.result.readonly = True
        flow = self.result.code(code, self.cwds) if isinstance(code, str) else self.result.walk(code, self.cwds)
        self.readonly = self.readonly and self.result.readonly
        self.result.readonly = before
        if here:
            self.cwds_after = union(*flow)

    def chdir(self, word: Word | None, physical: bool = False) -> None:
        """The shell's directory becomes ``word`` (None: home) if the command succeeds."""
        after: list[Optional[str]] = []
        for cwd in self.cwds:
            text, why = self.result.value(word, cwd) if word is not None else (self.result.home, None)
            if why or text is None or text == "-" or (cwd is None and not text.startswith("/")):
                after.append(None)
                continue
            path = text if text.startswith("/") else f"{cwd}/{text}"
            after.append(clean(path) if physical else logical(path))
        self.cwds_after = union(tuple(after))

    def lost(self) -> None:
        """After this command the shell's directory is unknown (popd, cd -)."""
        self.cwds_after = (None,)
