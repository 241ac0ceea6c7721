"""What one Bash command may do, read statically: the scan behind ``store.shell.analyse``.

``scan(command, cwd, home)`` never raises and never executes anything; a command it cannot read
is reported opaque. The ``Scan`` it returns (``store.shell.findings``) has:

- ``writes``: every path the command may create, truncate, append to, delete, rename or chmod.
  "~", $HOME and $PWD are expanded; relative paths are joined with the directory in effect at
  that point (``cd`` is followed; after a ``cd`` that may have failed both directories count);
  "." components and repeated slashes are dropped but symlinks and ".." are left for the caller
  to resolve. A path may be a directory the write lands in. "-", /dev/null, /dev/stdout,
  /dev/stderr, /dev/stdin, /dev/tty, /dev/fd/N and fd duplications (``>&2``) are not writes.
- ``links``: the entries among ``writes`` that may become a symbolic link or a moved folder
  (``ln``, ``mv``, ``cp -a``): a path below one of them cannot be resolved before the command runs.
- ``opaque``: why the effect cannot be known statically (unknown command, inline code, a target
  that uses a variable or a glob, a value evaluated as code, ...); when empty, ``writes`` is complete.
- ``invocations``: every simple command as bash runs it (wrappers, ``sh -c``/``eval`` bodies,
  ``xargs`` and ``find -exec`` commands resolved), with a ``None`` for a word known only at run
  time; ``unresolved`` says where code could not be read at all (``eval $X``, ``$CMD args``).
- ``assigned``: every variable name the command may set.
- ``baton``: the argv of each baton invocation (``baton``, ``.../bin/baton``, ``python3 .../store``),
  argv[0] always "baton"; an argument that is not literal appears as written (``$X``).
- ``readonly``: every simple command is known read-only, no writes and nothing opaque.
- ``commands``: the first word of every simple command analysed, as written, in order (one per
  run: a command inside a loop or a function may appear more than once).
"""

from __future__ import annotations

from store.base import chars
from store.shell.command import Call, Command, clean
from store.shell.environment import changes_programs
from store.shell.findings import Invocation, Scan
from store.shell.grammar import Walker
from store.shell.lex import tokenize
from store.shell.variables import NUMBER, Variables, word_value
from store.shell.words import LITERAL, Arith, Redir, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

    from store.shell.contract import Cwds, Flow, Token

MAX_LENGTH = 100_000
MAX_DEPTH = 10  # nested shells, evals, substitutions and function calls
MAX_WORK = 20_000  # simple commands analysed, loops and calls included
_WRITE_REDIRS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
_DEVICES = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"))
_ARITH_TESTS = frozenset(("-eq", "-ne", "-lt", "-le", "-gt", "-ge"))
_WHY = {"glob": "uses a glob", "var": "uses a variable", "sub": "uses command substitution",
        "psub": "uses process substitution", "arith": "uses arithmetic", "tilde": "uses ~user",
        "found": "is only known at run time", "input": "is only known at run time"}


class TooComplex(Exception):
    """The command has more to analyse than a hook should spend time on."""


def scan(command: str, cwd: str, home: str) -> Scan:
    """What ``command`` may do when run by bash in ``cwd`` with $HOME ``home``."""
    try:
        if not isinstance(command, str) or len(command) > MAX_LENGTH:
            return _refused("command too long or not text")
        result = Result(home)
        try:
            result.code(command, (cwd if isinstance(cwd, str) and cwd.startswith("/") else None,))
            result.finish()
        except TooComplex:
            result.unknown("command too complex to analyse")
        return result.scan()
    except Exception as exc:  # noqa: BLE001 - the contract: an unreadable command is opaque, never an error
        return _refused(f"cannot analyse the command ({type(exc).__name__})")


def _refused(reason: str) -> Scan:
    return Scan((), (reason,), (), False, (), (Invocation((None,), (None,), True),), (), (), (reason,))


class Result:
    """The findings of one scan, shared by every nested command."""

    def __init__(self, home: str) -> None:
        self.home = clean(home) if isinstance(home, str) and home.startswith("/") else None
        self.writes: List[str] = []
        self.links: List[str] = []
        self.opaque: List[str] = []
        self.unresolved: List[str] = []
        self.baton: List[Tuple[str, ...]] = []
        self.commands: List[str] = []
        self.invocations: List[Call] = []
        self.assigned: Dict[str, None] = {}
        self.readonly = True
        self.functions: Dict[str, List[Tuple[List[Token], bool]]] = {}  # name -> (body, certainly defined)
        self.traps: List[Tuple[str, Cwds]] = []
        self.vars = Variables()
        self.depth = 0
        self.nest = 0  # compound commands and nested walks being read (bounds the Python stack)
        self.cond = 0  # > 0 while reading code that may not run (a branch, a loop, a pipeline)
        self.work = 0

    def dry(self) -> Result:
        return Result("/")

    def scan(self) -> Scan:
        writes, opaque = tuple(dict.fromkeys(self.writes)), tuple(dict.fromkeys(self.opaque))
        readonly = self.readonly and not writes and not opaque
        calls = tuple(Invocation(call.argv, call.cwds, call.runner, call.globs) for call in self.invocations)
        return Scan(writes, opaque, tuple(self.baton), readonly, tuple(self.commands), calls,
                    tuple(dict.fromkeys(self.links)), tuple(self.assigned), tuple(dict.fromkeys(self.unresolved)))

    def finish(self) -> None:
        """Run what runs later (trap actions, with every function defined by then) and judge the
        values the command evaluates as code."""
        done = 0
        while done < len(self.traps) and done < 50:
            action, cwds = self.traps[done]
            done += 1
            cmd = Command(self, cwds)
            cmd.code(action)
            self.readonly = self.readonly and cmd.quiet()
        for reason in self.vars.verdicts():
            self.note(reason)
            self.readonly = False

    def note(self, reason: str) -> None:
        self.opaque.append(reason if len(reason) <= 160 else reason[:159] + "\u2026")

    def unknown(self, reason: str, argv: Tuple[Optional[str], ...] = (None,)) -> None:
        """Code the scan cannot read at all runs here (``argv``, an invocation without it): it may
        be any command."""
        self.note(reason)
        self.unresolved.append(self.opaque[-1])
        if argv:
            self.invocations.append(Call(argv, (None,), True))
        self.readonly = False

    def define(self, name: str, body: List[Token]) -> None:
        self.functions.setdefault(name, []).append((body, self.cond == 0))

    def defined(self) -> Dict[str, int]:
        """How many definitions each function has so far (see :meth:`uncertain`)."""
        return {name: len(bodies) for name, bodies in self.functions.items()}

    def uncertain(self, mark: Dict[str, int]) -> None:
        """The definitions made since ``mark`` ran in a subshell: they may not exist afterwards."""
        for name, bodies in self.functions.items():
            for k in range(mark.get(name, 0), len(bodies)):
                bodies[k] = (bodies[k][0], False)

    def code(self, text: str, cwds: Cwds) -> Flow:
        toks, problems = tokenize(text)
        for problem in problems:
            self.note(f"cannot parse: {problem}")
        return self.walk(toks, cwds)

    def walk(self, toks: List[Token], cwds: Cwds) -> Flow:
        if self.depth >= MAX_DEPTH:
            self.unknown("commands nested too deep")
            return cwds, cwds
        self.depth += 1
        self.nest += 1
        try:
            return Walker(self, toks).run(cwds)
        finally:
            self.depth -= 1
            self.nest -= 1

    def subs(self, word: Word | Arith, cwds: Cwds) -> None:
        self.cond += 1
        try:
            for toks in word.subs:  # a substitution runs in a subshell: its cd and functions do not leak
                self.walk(toks, cwds)
        finally:
            self.cond -= 1
        for kind, text in word.parts if isinstance(word, Word) else ():
            if kind == "arith":
                self.vars.expression(text[3:-2] if text.startswith("$((") else text[2:-1], "$(( ))")
            elif kind == "var" and text.startswith("${"):
                self.vars.parameter(text, self.assign)

    def assign(self, name: str, value: Optional[str] = None) -> None:
        """The command may set ``name`` to ``value`` (None: not known statically)."""
        self.assigned[name] = None
        self.vars.assign(name, value)
        if changes_programs(name, value):
            self.note(f"assignment to {name} changes how commands run")
            self.readonly = False

    def assignment(self, word: Word, cwds: Cwds) -> Optional[str]:
        """Read ``name=value`` / ``name[sub]=value``; the name, or None when ``word`` is no assignment."""
        found = chars.split_assignment(word.raw)
        if found is None:
            return None
        name, sub, end = found
        if sub is not None:
            self.vars.arrays.add(name)
            self.vars.expression(sub[1:-1], f"the subscript of {name}")
        tail = word.tail(end)
        value = None if tail is None else word_value(tail)
        if tail is not None and tail.raw.startswith("(") and sub is None:
            self.vars.arrays.add(name)  # name=( ... ): elements are data
            value = None
        self.assign(name, value)
        return name

    def arith(self, tok: Arith, cwds: Cwds) -> None:
        self.subs(tok, cwds)
        self.vars.expression(tok.raw, "(( ))")
        for name in arith_assigned(tok.raw):
            self.assign(name, NUMBER)

    def condition(self, words: List[Word], cwds: Cwds) -> None:
        """``[[ ... ]]``: operands of -eq and the like are arithmetic; ``-v NAME`` evaluates a subscript."""
        for k, word in enumerate(words):
            self.subs(word, cwds)
            bare = word.bare()
            if bare in _ARITH_TESTS:
                for other in words[max(k - 1, 0) : k] + words[k + 1 : k + 2]:
                    self.vars.arith_word(other, f"[[ {bare} ]]")
            elif bare == "-v" and k + 1 < len(words):
                self.vars.name_word(words[k + 1], "[[ -v ]]")

    def redirect(self, redir: Redir, cwds: Cwds) -> None:
        for word in (redir.target, redir.body):
            if word is not None:
                self.subs(word, cwds)
        target = redir.target
        if target is not None:
            self.socket(target, cwds)
        if target is None or redir.op not in _WRITE_REDIRS:
            return
        if redir.op == ">&" and _descriptor(target.literal() or ""):
            return  # duplicates or closes a descriptor
        self.target(target, cwds)

    def socket(self, target: Word, cwds: Cwds) -> None:
        """bash opens a network connection for /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT."""
        text = target.literal()
        head = target.parts[0] if target.parts else ("lit", "")
        if text is not None and text.startswith(("/dev/tcp/", "/dev/udp/")):
            self.invocations.append(Call(("/dev/" + text[5:8], *text[9:].split("/", 1)), cwds))
        elif text is None and (head[0] not in LITERAL or "/dev/tcp/".startswith(head[1][:9])
                               or "/dev/udp/".startswith(head[1][:9])):
            self.invocations.append(Call(("/dev/tcp", None), cwds))  # may be a socket: unknown host

    def value(self, word: Word, cwd: Optional[str]) -> tuple[str | None, str | None]:
        """The text ``word`` expands to in ``cwd`` (only ~, $HOME, $PWD expand), or why it is unknown."""
        if word.braced():
            return None, "uses brace expansion"
        if [kind for kind, _ in word.parts] == ["psub"]:
            return "/dev/fd/63", None  # a pipe to another command, not a file
        out = []
        for kind, text in word.parts:
            name = text if kind == "tilde" else _simple_var(text)
            known = self.home if name in ("~", "$HOME") else cwd if name in ("~+", "$PWD") else None
            if kind in LITERAL:
                out.append(text)
            elif known is not None:
                out.append(known)
            else:
                return None, "is relative to an unknown directory" if name in ("~+", "$PWD") else _WHY.get(kind)
        return "".join(out), None

    def target(self, word: Word, cwds: Cwds, child: str = "", link: bool = False) -> bool:
        """Record ``word`` (then ``child`` inside it, if given) as written, once per possible cwd;
        False if it names no file (/dev/null, "-", ...). ``link``: it may become a link."""
        found = False
        for cwd in cwds:
            text, why = self.value(word, cwd)
            if text and not text.startswith("/"):
                text, why = (cwd + "/" + text, None) if cwd else (None, "is relative to an unknown directory")
            if why:
                self.note(f"write target {why}: {word.raw}")
            path = clean(text + "/" + child if child else text) if text and word.literal() != "-" else "/dev/null"
            if not why and not not_a_file(path):
                self.writes.append(path)
                if link:
                    self.links.append(path)
            found = found or bool(why) or not not_a_file(path)
        return found

    def simple(self, words: List[Word], redirs: List[Redir], cwds: Cwds) -> Flow:
        self.work += 1
        if self.work > MAX_WORK:
            raise TooComplex
        for word in words:
            self.subs(word, cwds)
        for redir in redirs:
            self.redirect(redir, cwds)
        k = 0
        while k < len(words) and self.assignment(words[k], cwds) is not None:
            k += 1
        if k == len(words):
            return cwds, cwds
        cmd = Command(self, cwds)
        cmd.run(words[k], words[k + 1 :])
        self.readonly = self.readonly and cmd.quiet()
        return (cwds if cmd.cwds_after is None else cmd.cwds_after), cwds


def not_a_file(path: str) -> bool:
    """A device that is no file to protect:
    ``/dev/(?:null|stdout|stderr|stdin|tty|fd/[0-9]+)\\Z|/proc/self/fd/[0-9]+\\Z``."""
    if path in _DEVICES:
        return True
    for prefix in ("/dev/fd/", "/proc/self/fd/"):
        if path.startswith(prefix):
            return chars.is_digits(path[len(prefix) :])
    return False


def _descriptor(text: str) -> bool:
    """``>&N``, ``>&N-`` and ``>&-`` duplicate or close a descriptor: ``[0-9]+-?|-`` is all of ``text``."""
    return text == "-" or chars.is_digits(text[:-1] if text.endswith("-") else text)


def _simple_var(text: str) -> str:
    """``$NAME`` for a part that is ``$NAME`` or ``${NAME}`` (``\\$\\{?([A-Za-z_][A-Za-z0-9_]*)\\}?\\Z``), else ""."""
    if not text.startswith("$"):
        return ""
    start = 2 if text.startswith("{", 1) else 1
    end = chars.name_end(text, start)
    return "$" + text[start:end] if end > start and text[end:] in ("", "}") else ""


def arith_assigned(text: str) -> List[str]:
    """The names an arithmetic expression assigns, left to right: ``NAME op= ...`` (not ``==``),
    ``NAME++``, ``NAME--``, ``++NAME``, ``--NAME``, spaces allowed before the operator."""
    found: List[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in chars.NAME_START:
            end = chars.name_end(text, i)
            k = chars.span_space(text, end)
            assigned = chars.arith_assign_end(text, end)
            if assigned > 0:
                found.append(text[i:end])
                i = assigned
            elif text.startswith(("++", "--"), k):
                found.append(text[i:end])
                i = k + 2
            else:
                i = end  # a shorter name from inside this one is followed by the same text
        elif text.startswith(("++", "--"), i):
            k = chars.span_space(text, i + 2)
            end = chars.name_end(text, k)
            if end > k:
                found.append(text[k:end])
                i = end
            else:
                i += 1
        else:
            i += 1
    return found
