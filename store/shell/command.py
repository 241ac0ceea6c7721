"""One simple command under analysis: what the handlers in ``commands``, ``builtin``, ``programs``
and ``writers`` report through, and the record of each invocation the scan returns."""

from __future__ import annotations

from store.shell import known
from store.shell.grammar import MAX_NEST, union
from store.shell.words import is_baton

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple

    from store.shell.contract import Cwds, Runner, Token
    from store.shell.variables import Variables
    from store.shell.words import Word


class Call:
    """An invocation being recorded: ``runner`` is set once its handler has looked at it."""

    __slots__ = ("argv", "cwds", "runner", "globs")

    def __init__(self, argv: Tuple[Optional[str], ...], cwds: Cwds, runner: bool = False,
                 globs: Tuple[Optional[str], ...] = ()) -> None:
        self.argv, self.cwds, self.runner, self.globs = argv, cwds, runner, globs


def glob_pattern(word: Word) -> Optional[str]:
    """The word as a pattern for Python's ``glob`` when it is plain text with unquoted ``*``, ``?``
    or ``[...]`` and nothing else to expand; None otherwise."""
    if not any(kind == "glob" for kind, _ in word.parts) or word.braced():
        return None
    out = []
    for kind, text in word.parts:
        if kind == "glob":
            out.append(text)
        elif kind in ("lit", "qlit"):
            out.append("".join(f"[{c}]" if c in "*?[" else c for c in text))
        else:
            return None
    return "".join(out)


def clean(path: str) -> str:
    """``path`` without "." components, repeated or trailing slashes (".." is kept: symlinks)."""
    return "/" + "/".join(part for part in path.split("/") if part not in ("", "."))


def logical(path: str) -> str:
    """``path`` with ".." taken lexically, as ``cd`` does without -P."""
    out: List[str] = []
    for part in path.split("/"):
        if part == "..":
            out = out[:-1]
        elif part not in ("", "."):
            out.append(part)
    return "/" + "/".join(out)


def program_name(text: str) -> str:
    """How an invocation names its program: the base name of a program in a system folder."""
    return text.rsplit("/", 1)[-1] if known.system_path(text) else text


class Command:
    """One simple command under analysis; handlers report through it what the command does."""

    def __init__(self, result: Runner, cwds: Cwds) -> None:
        self.result = result
        self.cwds = cwds
        self.readonly = True
        self.cwds_after: Cwds | None = None
        self.children: List[Command] = []
        self.call: Optional[Call] = None

    @property
    def vars(self) -> Variables:
        return self.result.vars

    def quiet(self) -> bool:
        """Known read-only, and so is every command it ran."""
        return self.readonly and all(child.quiet() for child in self.children)

    def aside(self, elsewhere: bool = False) -> Command:
        """A command this one runs in another process (in an unknown directory if ``elsewhere``)."""
        child = Command(self.result, (None,) if elsewhere else self.cwds)
        self.children.append(child)
        return child

    def write(self, word: Word, child: str = "", link: bool = False) -> None:
        if self.result.target(word, self.cwds, child, link):
            self.readonly = False

    def opaque(self, reason: str) -> None:
        self.readonly = False
        self.result.note(reason)

    def runs_code(self, reason: str) -> None:
        """The program runs code the scan cannot read (a script, inline code, a build tool)."""
        self.opaque(reason)
        if self.call is not None:
            self.call.runner = True

    def unknown(self, reason: str) -> None:
        """Code that cannot be read at all runs here: it may be any command."""
        self.readonly = False
        self.result.unknown(reason)

    def baton(self, argv: Tuple[str, ...]) -> None:
        self.result.baton.append(argv)

    def assign(self, name: str, value: Optional[str] = None) -> None:
        self.result.assign(name, value)

    def run(self, name: Word, args: List[Word], functions: bool = True) -> None:
        """Analyse ``name args`` as a command (wrappers call this for the command they run);
        ``functions``: a shell function of that name runs instead (not after ``command``)."""
        text = name.literal()
        self.result.commands.append(name.raw if text is None else text)
        baton = is_baton(name)
        program = "baton" if baton else program_name(text) if text is not None else None
        self.call = Call((program, *(w.literal() for w in args)), self.cwds,
                         globs=(None, *(glob_pattern(w) if w.literal() is None else None for w in args)))
        self.result.invocations.append(self.call)
        bodies = self.result.functions.get(text or "", []) if functions else []
        if text is None and not baton:
            self.readonly = False
            self.result.unknown(f"the command name is computed: {name.raw}", argv=())
            self.call.runner = True
        elif self.result.nest >= MAX_NEST:
            self.opaque("commands nested too deep")
        elif bodies:
            for body, _ in bodies:
                self.function(body)
            if not any(certain for _, certain in bodies):
                self.program(text or "", baton, args)
        else:
            self.program(text or "", baton, args)

    def function(self, body: List[Token]) -> None:
        self.nested(lambda: self.code(body, here=True))

    def program(self, text: str, baton: bool, args: List[Word]) -> None:
        if baton or "/" not in text or known.system_path(text):
            program = "baton" if baton else text.rsplit("/", 1)[-1]
            self.nested(lambda: known.dispatch(self, program, args))
        else:
            self.runs_code(f"runs a local program '{text}'")

    def nested(self, analyse: Callable[[], None]) -> None:
        self.result.nest += 1
        try:
            analyse()
        finally:
            self.result.nest -= 1

    def code(self, code: str | List[Token], here: bool = False) -> None:
        """Analyse shell code run by this command; ``here``: in this shell, so a cd in it persists."""
        before = self.result.readonly
        self.result.readonly = True
        self.result.cond += not here
        try:
            flow = self.result.code(code, self.cwds) if isinstance(code, str) else self.result.walk(code, self.cwds)
        finally:
            self.result.cond -= not here
        self.readonly = self.readonly and self.result.readonly
        self.result.readonly = before
        if here:
            self.cwds_after = union(*flow)

    def forget(self, name: str | None) -> None:
        """``unset -f NAME``: the function may no longer exist."""
        bodies = self.result.functions.get(name or "", [])
        bodies[:] = [(body, False) for body, _ in bodies]

    def later(self, code: str) -> None:
        """Shell code that runs later (a trap's action), analysed once the whole command is read."""
        self.result.traps.append((code, (None,)))

    def chdir(self, word: Word | None, physical: bool = False) -> None:
        """The shell's directory becomes ``word`` (None: home) if the command succeeds."""
        after: List[Optional[str]] = []
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
