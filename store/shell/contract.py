"""The interfaces between the scanner and its parts, for type checkers only (never imported at run time).

``Command`` is what a command handler (``commands``, ``programs``, ``writers``) reports through;
``Runner`` is what the grammar walker hands each simple command to. ``scan`` implements both, so
the handlers and the grammar depend on these interfaces rather than on the scanner itself.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Protocol, Tuple, Union

from store.shell.words import Arith, Op, Redir, Word

Token = Union[Word, Op, Redir, Arith]
Cwds = Tuple[Optional[str], ...]
Flow = Tuple[Cwds, Cwds]  # the directories possibly current after success, after failure


class Command(Protocol):
    """One simple command under analysis, as a handler sees it."""

    readonly: bool

    def aside(self, elsewhere: bool = False) -> Command: ...

    def write(self, word: Word, child: str = "") -> None: ...

    def opaque(self, reason: str) -> None: ...

    def baton(self, argv: Tuple[str, ...]) -> None: ...

    def assign(self, name: str) -> None: ...

    def run(self, name: Word, args: List[Word]) -> None: ...

    def code(self, code: Union[str, List[Token]], here: bool = False) -> None: ...

    def chdir(self, word: Optional[Word], physical: bool = False) -> None: ...

    def lost(self) -> None: ...


Handler = Callable[[Command, str, List[Word]], None]


class Runner(Protocol):
    """What the grammar walker reports to while it reads a token list."""

    nest: int
    commands: List[str]
    functions: Dict[str, List[Token]]

    def note(self, reason: str) -> None: ...

    def subs(self, word: Union[Word, Arith], cwds: Cwds) -> None: ...

    def arith(self, tok: Arith, cwds: Cwds) -> None: ...

    def assign(self, name: str) -> None: ...

    def redirect(self, redir: Redir, cwds: Cwds) -> None: ...

    def simple(self, words: List[Word], redirs: List[Redir], cwds: Cwds) -> Flow: ...

    def walk(self, toks: List[Token], cwds: Cwds) -> Flow: ...

    def dry(self) -> Runner:
        """A runner that records nothing, to read past a function body (analysed at each call)."""
        ...
