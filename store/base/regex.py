"""Regular expressions compiled on first use, so a hook process pays only for the patterns it runs.

``lazy(pattern, flags)`` stands where ``re.compile(pattern, flags)`` stood at a module's top: it
compiles on the first method call (``match``, ``search``...) and answers the same from then on.
Compiling every pattern of every imported module cost a Bash gate call several milliseconds.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, AnyStr, Pattern


class Lazy:
    """``re.compile(*args)`` the first time one of its attributes is read; each attribute is then
    kept on the instance, so later reads cost what they cost on the compiled pattern."""

    def __init__(self, pattern: Any, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and the like probe dunders: not a use
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            import re  # at the first use, so that importing a module full of patterns costs nothing

            compiled = self.__dict__["_compiled"] = re.compile(*self._args)
        value = getattr(compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self._args[0]!r}, {self._args[1]!r})"


def lazy(pattern: AnyStr, flags: int = 0) -> Pattern[AnyStr]:
    """A pattern that behaves as ``re.compile(pattern, flags)`` and compiles when first used."""
    return Lazy(pattern, flags)  # type: ignore[return-value]
