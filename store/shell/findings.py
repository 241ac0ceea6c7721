"""What a scan reports: :class:`Scan` for the whole command and :class:`Invocation` for each simple command.

Both are immutable values (compared, hashed and shown by their fields) so that the gate, the
rules and the tests can hold and compare them freely.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Tuple

    Argv = Tuple[Optional[str], ...]


class _Value:
    __slots__: Tuple[str, ...] = ()

    def _set(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def astuple(self) -> Tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.astuple() == other.astuple()

    def __hash__(self) -> int:
        return hash(self.astuple())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self.astuple()))
        return f"{type(self).__name__}({fields})"


class Invocation(_Value):
    """One simple command as bash would run it: ``argv`` after quotes, escapes and wrappers are
    resolved (``None`` for a word only known at run time; a program in a system folder is named
    by its base name), the directories that may be current then (``None``: unknown), and
    ``runner``: the program runs code the scan cannot read (an interpreter, a script, an unknown
    program). ``globs`` gives, for each word of ``argv`` that is ``None`` only because it is a
    file name pattern (``src/*.py``), that pattern in Python's ``glob`` syntax, else ``None``."""

    __slots__ = ("argv", "cwds", "runner", "globs")
    argv: Argv
    cwds: Tuple[Optional[str], ...]
    runner: bool
    globs: Tuple[Optional[str], ...]

    def __init__(self, argv: Argv, cwds: Tuple[Optional[str], ...], runner: bool,
                 globs: Tuple[Optional[str], ...] = ()) -> None:
        self._set(argv, cwds, runner, globs or (None,) * len(argv))

    @property
    def program(self) -> Optional[str]:
        return self.argv[0] if self.argv else None

    @property
    def resolved(self) -> bool:
        """Every word is known."""
        return all(word is not None for word in self.argv)


class Scan(_Value):
    """What a command may do (see ``store.shell.scan``); every field is a tuple or a bool."""

    __slots__ = ("writes", "opaque", "baton", "readonly", "commands", "invocations", "links", "assigned",
                 "unresolved")
    writes: Tuple[str, ...]
    opaque: Tuple[str, ...]
    baton: Tuple[Tuple[str, ...], ...]
    readonly: bool
    commands: Tuple[str, ...]
    invocations: Tuple[Invocation, ...]
    links: Tuple[str, ...]
    assigned: Tuple[str, ...]
    unresolved: Tuple[str, ...]

    def __init__(self, writes: Tuple[str, ...], opaque: Tuple[str, ...], baton: Tuple[Tuple[str, ...], ...],
                 readonly: bool, commands: Tuple[str, ...], invocations: Tuple[Invocation, ...] = (),
                 links: Tuple[str, ...] = (), assigned: Tuple[str, ...] = (), unresolved: Tuple[str, ...] = ()) -> None:
        self._set(writes, opaque, baton, readonly, commands, invocations, links, assigned, unresolved)
