"""Runs of characters read without ``re``: names, digits, assignments, what a word is made of.

Importing ``re`` costs a hook process about as much as starting the interpreter, so the Bash
gate's shell reader scans with these instead. Each function names the regular expression it
stands for; ``tests/shell/test_no_regex.py`` checks each one against that expression.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import AbstractSet, Optional, Tuple

DIGITS = frozenset("0123456789")
LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
NAME_START = LETTERS | {"_"}
NAME_CHARS = NAME_START | DIGITS


def span(s: str, i: int, chars: AbstractSet[str], end: Optional[int] = None) -> int:
    """Where the run of ``chars`` starting at ``i`` ends (``i`` when there is none): ``[chars]*``."""
    n = len(s) if end is None else end
    while i < n and s[i] in chars:
        i += 1
    return i


def span_not(s: str, i: int, stops: AbstractSet[str], end: Optional[int] = None) -> int:
    """Where the run of characters not in ``stops`` starting at ``i`` ends: ``[^stops]*``."""
    n = len(s) if end is None else end
    while i < n and s[i] not in stops:
        i += 1
    return i


def name_end(s: str, i: int = 0, end: Optional[int] = None) -> int:
    """Where the name ``[A-Za-z_][A-Za-z0-9_]*`` at ``i`` ends, or ``i`` when none starts there."""
    n = len(s) if end is None else end
    if i >= n or s[i] not in NAME_START:
        return i
    return span(s, i + 1, NAME_CHARS, n)


def is_name(s: str) -> bool:
    """``[A-Za-z_][A-Za-z0-9_]*\\Z``."""
    return bool(s) and name_end(s) == len(s)


def is_digits(s: str) -> bool:
    """``[0-9]+\\Z`` (ASCII digits only, unlike ``str.isdigit``)."""
    return bool(s) and span(s, 0, DIGITS) == len(s)


def assignment(s: str, i: int = 0, end: Optional[int] = None) -> Optional[Tuple[int, int, int]]:
    """``([A-Za-z_][A-Za-z0-9_]*)(\\[[^\\]]*\\])?\\+?=`` matched at ``i`` (not beyond ``end``): the
    ends of the name, of the subscript (the name's end when there is none) and of the ``=``; or None."""
    n = len(s) if end is None else end
    k = name_end(s, i, n)
    if k == i:
        return None
    sub = k
    if k < n and s[k] == "[":
        close = s.find("]", k + 1, n)
        if close < 0:
            return None
        sub = close + 1
    j = sub + 1 if sub < n and s[sub] == "+" else sub
    if j < n and s[j] == "=":
        return k, sub, j + 1
    return None


def split_assignment(s: str) -> Optional[Tuple[str, Optional[str], int]]:
    """:func:`assignment` at the start of ``s``, as (name, ``[subscript]`` or None, length of ``name[sub]+=``)."""
    found = assignment(s)
    if found is None:
        return None
    name, sub, end = found
    return s[:name], s[name:sub] or None, end


def span_space(s: str, i: int) -> int:
    """Where the whitespace from ``i`` ends: ``\\s*`` (what ``str.isspace`` calls whitespace)."""
    n = len(s)
    while i < n and s[i].isspace():
        i += 1
    return i


_ARITH_OPS = frozenset("-+*/%&|^")


def arith_assign_end(s: str, i: int) -> int:
    """After a name at ``i``, an arithmetic assignment: ``\\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)``; where it
    ends, or -1 (``x == 1`` compares, ``x += 1`` assigns)."""
    k = span_space(s, i)
    op = 1 if s[k : k + 1] in _ARITH_OPS else 2 if s.startswith(("<<", ">>"), k) else 0
    for at in ((k + op, k) if op else (k,)):
        if s.startswith("=", at) and not s.startswith("=", at + 1):
            return at + 1
    return -1
