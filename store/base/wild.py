"""Shell wildcards without ``re``: ``fnmatchcase`` and ``glob`` as the standard library answers them.

``fnmatch`` and ``glob`` translate each pattern into a regular expression, and importing ``re``
costs a hook process about as much as starting the interpreter. A wildcard here is read into
single-character matchers (a literal, ``?``, a ``[...]`` set) and ``*``, and matched by the usual
greedy scan that backs up to the last ``*`` on a mismatch. Sets are read exactly as
``fnmatch.translate`` reads them (Python 3.10 onwards): ``[!...]`` negates, a ``]`` right after
``[`` or ``[!`` is literal, ``a-z`` is a range, a reversed range matches nothing, a ``-`` first or
last is literal, an unclosed ``[`` is a literal ``[``, and there is no escape character.
``tests/base/test_wild.py`` checks both functions against the standard library's.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Iterator, List, Tuple, Union

    Token = Union[None, str, "Set_"]

# a compiled pattern is a tuple of: _STAR (any text, including none), a one-character string (that
# character) or a Set_ ("?" being the set of every character)
_STAR = None
_COMPILED: Dict[str, Tuple[Token, ...]] = {}
MAGIC = frozenset("*?[")


class Set_:
    """One ``[...]``: its characters and ranges, negated or not (``None`` ranges: never matches)."""

    __slots__ = ("chars", "ranges", "negate")

    def __init__(self, chars: FrozenSet[str], ranges: Tuple[Tuple[str, str], ...], negate: bool) -> None:
        self.chars, self.ranges, self.negate = chars, ranges, negate

    def __contains__(self, c: str) -> bool:
        inside = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negate


_EVERY = Set_(frozenset(), (), True)
_ANY_ONE = _EVERY


def has_magic(text: str) -> bool:
    """``glob.has_magic``: the text holds ``*``, ``?`` or ``[``."""
    return not MAGIC.isdisjoint(text)


def fnmatchcase(name: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(name, pattern)``."""
    tokens = _COMPILED.get(pattern)
    if tokens is None:
        tokens = _COMPILED[pattern] = _compile(pattern)
    n, t = len(name), len(tokens)
    i = k = 0
    star, mark = -1, 0
    while i < n:
        if k < t:
            token = tokens[k]
            if token is _STAR:
                star, mark = k, i
                k += 1
                continue
            if token == name[i] if token.__class__ is str else name[i] in token:
                i += 1
                k += 1
                continue
        if star < 0:
            return False
        k, mark = star + 1, mark + 1  # the last "*" takes one more character
        i = mark
    while k < t and tokens[k] is _STAR:
        k += 1
    return k == t


def _compile(pattern: str) -> Tuple[Token, ...]:
    out: List[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not out or out[-1] is not _STAR:
                out.append(_STAR)
        elif c == "?":
            out.append(_ANY_ONE)
        elif c == "[":
            j = i
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append("[")
            else:
                out.append(_set(pattern, i, j))
                i = j + 1
        else:
            out.append(c)
    return tuple(out)


def _set(pattern: str, i: int, j: int) -> Set_:
    """The set ``pattern[i:j]`` (between the brackets): the regex class ``fnmatch.translate`` builds
    for it, read as ``re`` reads a class."""
    stuff = pattern[i:j]
    if "-" not in stuff:
        chunks = [stuff]
    else:  # split at the hyphens that make ranges; a "-" right after "[" or "[!" is literal
        chunks = []
        start, k = i, i + 2 if pattern[i] == "!" else i + 1
        while True:
            k = pattern.find("-", k, j)
            if k < 0:
                break
            chunks.append(pattern[start:k])
            start = k + 1
            k += 3
        last = pattern[start:j]
        if last:
            chunks.append(last)
        else:
            chunks[-1] += "-"
        for k in range(len(chunks) - 1, 0, -1):  # a reversed range is dropped with its two ends
            if chunks[k - 1][-1] > chunks[k][0]:
                chunks[k - 1] = chunks[k - 1][:-1] + chunks[k][1:]
                del chunks[k]
    # the class as (character, is a range's hyphen): every other character is escaped, so literal
    items = [(c, False) for c in chunks[0]]
    for chunk in chunks[1:]:
        items.append(("-", True))
        items.extend((c, False) for c in chunk)
    if not items:
        return Set_(frozenset(), (), False)  # an empty class: nothing
    negate = items[0] == ("!", False)  # read only now: "[]--!]", its one range dropped, is "[!]"
    if negate:
        del items[0]
    chars: List[str] = []
    ranges: List[Tuple[str, str]] = []
    k = 0
    while k < len(items):
        c = items[k][0]
        if k + 2 < len(items) and items[k + 1][1]:  # a range (a hyphen last is literal)
            ranges.append((c, items[k + 2][0]))
            k += 3
        else:
            chars.append(c)
            k += 1
    return Set_(frozenset(chars), tuple(ranges), negate)


def glob(pattern: str, root: str) -> List[str]:
    """``glob.glob(pattern)`` run in the folder ``root`` (an absolute ``pattern`` ignores it), not
    recursive, hidden names matched only by a pattern that starts with ``.``: what bash expands."""
    return list(_glob(pattern, root, False))


def _glob(pattern: str, root: str, dirs_only: bool) -> Iterator[str]:
    folder, base = os.path.split(pattern)
    if not has_magic(pattern):
        if base:
            if os.path.lexists(os.path.join(root, pattern)):
                yield pattern
        elif os.path.isdir(os.path.join(root, folder)):
            yield pattern
        return
    if not folder:
        yield from _in_folder(root, base, dirs_only)
        return
    parents = _glob(folder, root, True) if folder != pattern and has_magic(folder) else iter((folder,))
    for parent in parents:
        where = os.path.join(root, parent)
        if has_magic(base):
            names: List[str] = _in_folder(where, base, dirs_only)
        elif base:
            names = [base] if os.path.lexists(os.path.join(where, base)) else []
        else:
            names = [base] if os.path.isdir(where) else []
        for name in names:
            yield os.path.join(parent, name)


def _in_folder(folder: str, pattern: str, dirs_only: bool) -> List[str]:
    names: List[str] = []
    try:
        with os.scandir(folder or os.curdir) as entries:
            for entry in entries:
                try:
                    if not dirs_only or entry.is_dir():
                        names.append(entry.name)
                except OSError:
                    pass
    except OSError:
        return []
    if pattern[0] != ".":
        names = [x for x in names if x[0] != "."]
    return [x for x in names if fnmatchcase(x, pattern)]
