"""The interfaces between the scanner and its parts, for type checkers only (never imported at run time).

``Command`` is what a command handler (``commands``, ``builtin``, ``programs``, ``writers``)
reports through; ``Runner`` is what the grammar walker and a command hand their findings to.
``command.Command`` and ``scan.Result`` implement them, so the handlers and the grammar depend
on these interfaces rather than on the scanner itself.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union

from store.shell.variables import Variables
from store.shell.words import Arith, Op, Redir, Word

Token = Union[Word, Op, Redir, Arith]
Cwds = Tuple[Optional[str], ...]
Flow = Tuple[Cwds, Cwds]  # the directories possibly current after success, after failure


class Command(Protocol):
    """One simple command under analysis, as a handler sees it."""

    readonly: bool
    cwds: Cwds

    @property
    def vars(self) -> Variables: ...

    def aside(self, elsewhere: bool = False) -> Command: ...

    def write(self, word: Word, child: str = "", link: bool = False) -> None: ...

    def opaque(self, reason: str) -> None: ...

    def runs_code(self, reason: str) -> None: ...

    def unknown(self, reason: str) -> None: ...

    def baton(self, argv: Tuple[str, ...]) -> None: ...

    def assign(self, name: str, value: Optional[str] = None) -> None: ...

    def run(self, name: Word, args: List[Word], functions: bool = True) -> None: ...

    def function(self, body: List[Token]) -> None: ...

    def code(self, code: Union[str, List[Token]], here: bool = False) -> None: ...

    def later(self, code: str) -> None: ...

    def forget(self, name: Optional[str]) -> None: ...

    def chdir(self, word: Optional[Word], physical: bool = False) -> None: ...

    def lost(self) -> None: ...


Handler = Callable[[Command, str, List[Word]], None]


class Runner(Protocol):
    """What the grammar walker and each command report to while a token list is read."""

    home: Optional[str]
    nest: int
    cond: int
    readonly: bool
    commands: List[str]
    unresolved: List[str]
    invocations: List[Any]
    baton: List[Tuple[str, ...]]
    traps: List[Tuple[str, Cwds]]
    functions: Dict[str, List[Tuple[List[Token], bool]]]
    vars: Variables

    def note(self, reason: str) -> None: ...

    def unknown(self, reason: str, argv: Tuple[Optional[str], ...] = (None,)) -> None: ...

    def define(self, name: str, body: List[Token]) -> None: ...

    def defined(self) -> Dict[str, int]: ...

    def uncertain(self, mark: Dict[str, int]) -> None: ...

    def subs(self, word: Union[Word, Arith], cwds: Cwds) -> None: ...

    def arith(self, tok: Arith, cwds: Cwds) -> None: ...

    def condition(self, words: List[Word], cwds: Cwds) -> None: ...

    def assign(self, name: str, value: Optional[str] = None) -> None: ...

    def redirect(self, redir: Redir, cwds: Cwds) -> None: ...

    def value(self, word: Word, cwd: Optional[str]) -> Tuple[Optional[str], Optional[str]]: ...

    def target(self, word: Word, cwds: Cwds, child: str = "", link: bool = False) -> bool: ...

    def simple(self, words: List[Word], redirs: List[Redir], cwds: Cwds) -> Flow: ...

    def code(self, text: str, cwds: Cwds) -> Flow: ...

    def walk(self, toks: List[Token], cwds: Cwds) -> Flow: ...

    def dry(self) -> Runner:
        """A runner that records nothing, to read past a function body (analysed at each call)."""
        ...
