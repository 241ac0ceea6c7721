"""A small base for value classes on the hooks' hot path (``dataclasses`` costs ~13 ms to import).

Subclasses list their fields in ``__slots__`` and assign them in ``__init__``; equality, hashing
and ``repr`` come from the slots.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Tuple


class Value:
    __slots__: Tuple[str, ...] = ()

    def _fields(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(repr(f) for f in self._fields())))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"


class Frozen(Value):
    """A value whose fields, once set in ``__init__``, cannot be reassigned."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"{type(self).__name__}.{name} is read-only")
        object.__setattr__(self, name, value)

    def _init(self, *values: object) -> None:
        """Set every field, in ``__slots__`` order, from ``__init__``: one checked assignment per
        field was a third of the time a hook spends validating a plan of forty steps."""
        names: Tuple[str, ...] = self.__slots__
        if len(values) != len(names):
            raise TypeError(f"{type(self).__name__} has {len(names)} fields, not {len(values)}")
        for name, value in zip(names, values):
            object.__setattr__(self, name, value)
