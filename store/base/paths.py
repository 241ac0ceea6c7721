"""Where a write lands: paths resolved through symlinks, project-relative globs, protected files.

Globs are matched against the project-relative path of the *resolved* target (symlinks followed,
``..`` applied after them), case-sensitively: ``*`` and ``?`` stay within one path segment, ``**``
spans segments, and a pattern that matches a folder covers everything below it. A glob starting
with ``/`` or ``~`` is matched against the absolute path instead. Protected paths are compared
after Unicode NFKC folding and case folding, so ``.BATON`` or a full-width ``．baton`` on a
case-insensitive file system is still protected (fail closed).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterable, Optional, Set, Tuple


_BY_FD = os.path.isdir("/proc/self/fd") and hasattr(os, "O_PATH")


def real(path: str) -> str:
    """``os.path.realpath(path)``: for a path that exists, as the kernel resolved it when opening it
    (one open and one readlink, where ``realpath`` makes a system call per component); otherwise,
    and off Linux, ``realpath`` itself."""
    if _BY_FD:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return os.path.realpath(path)
        try:
            found = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            found = ""
        finally:
            os.close(fd)
        if found.startswith("/") and not found.endswith(" (deleted)"):
            return found
    return os.path.realpath(path)


def resolve(raw: str, cwd: str, home: str) -> str:
    """The real absolute path a tool would write for ``raw`` typed in ``cwd``."""
    if raw == "~" or raw.startswith("~/"):
        raw = home + raw[1:]
    return os.path.realpath(os.path.join(cwd, raw))


def relative(real: str, project_real: str) -> Optional[str]:
    """``real`` relative to the project root, or ``None`` when it lies outside."""
    if real == project_real:
        return ""
    prefix = project_real.rstrip(os.sep) + os.sep
    return real[len(prefix):] if real.startswith(prefix) else None


# a glob's tokens: one character to match, or one of these wildcards
_ANY_IN_SEGMENT, _ONE_IN_SEGMENT, _ANY, _ANY_FOLDERS = "*", "?", "**", "**/"
_TOKENS: Dict[str, Tuple[str, ...]] = {}


def tokens(pattern: str) -> Tuple[str, ...]:
    """A glob's tokens: single characters, and the wildcards ``**/``, ``**``, ``*`` and ``?``."""
    found = _TOKENS.get(pattern)
    if found is None:
        out, i = [], 0
        while i < len(pattern):
            for wild in (_ANY_FOLDERS, _ANY):
                if pattern.startswith(wild, i):
                    out.append(wild)
                    i += len(wild)
                    break
            else:
                out.append(pattern[i])
                i += 1
        found = _TOKENS[pattern] = tuple(out)
    return found


def _wild_match(path: str, pattern: str) -> bool:
    """The glob as a small automaton, run over ``path`` once (no ``re``: a hook that only checks a
    write against the step's globs does not pay for importing it). The states are positions in the
    pattern's tokens; ``len(toks)`` is the pattern's end, from which ``/`` leads to the folder's
    contents (a pattern that matches a folder covers everything below it). ``-1 - i`` is the state
    inside the ``**/`` at ``i`` once it has taken a character: it is left only by a ``/``."""
    toks = tokens(pattern)
    end, below = len(toks), len(toks) + 1

    def closure(states: Set[int]) -> Set[int]:
        todo = list(states)
        while todo:  # every wildcard but "?" may match nothing
            i = todo.pop()
            if 0 <= i < end and toks[i] in (_ANY_IN_SEGMENT, _ANY, _ANY_FOLDERS) and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return states

    states = closure({0})
    for c in path:
        step: Set[int] = set()
        for i in states:
            if i >= end:
                if c == "/" or i == below:
                    step.add(below)
                continue
            token = toks[i] if i >= 0 else _ANY_FOLDERS
            if token == _ANY_FOLDERS:  # nothing, or any text that ends with "/"
                at = i if i >= 0 else -1 - i
                step.add(-1 - at)
                if c == "/":
                    step.add(at + 1)
            elif token == _ANY:
                step.add(i)
            elif token == _ANY_IN_SEGMENT:
                if c != "/":
                    step.add(i)
            elif token == c or token == _ONE_IN_SEGMENT and c != "/":
                step.add(i + 1)
        if not step:
            return False
        states = closure(step)
    return end in states or below in states


def glob_match(path: str, pattern: str) -> bool:
    """True when ``path`` (or a folder above it) matches ``pattern``; see the module docstring."""
    pattern = pattern.strip()
    while pattern.endswith("/**") or pattern.endswith("/"):  # "src/**" and "src/" mean the folder
        pattern = pattern[:-3] if pattern.endswith("/**") else pattern[:-1]
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if not pattern:
        return False
    if "*" not in pattern and "?" not in pattern:  # what the regex would say, without compiling one per call
        return path == pattern or path.startswith(pattern + "/")
    return _wild_match(path, pattern)


def segment_match(name: str, pattern: str) -> bool:
    """One path segment against one segment of a glob (no ``/`` in either, no ``**`` in ``pattern``):
    ``*`` is any text, ``?`` one character, anything else itself."""
    if "*" not in pattern and "?" not in pattern:
        return name == pattern
    return _wild_match(name, pattern)


def allowed(real: str, project_real: str, home: str, patterns: Iterable[str]) -> bool:
    """True when the resolved ``real`` path is covered by one of ``patterns``."""
    rel = relative(real, project_real)
    for pattern in patterns:
        if pattern.startswith("~"):
            pattern = home + pattern[1:]
        if pattern.startswith("/"):
            if glob_match(real, os.path.realpath(pattern) if "*" not in pattern else pattern):
                return True
        elif rel is not None and glob_match(rel, pattern):
            return True
    return False


def fold(path: str) -> str:
    """Normal form for comparisons that must not be fooled by case or compatibility characters."""
    if path.isascii():
        return path.lower()  # NFKC leaves ASCII alone and casefold equals lower() on it
    from unicodedata import normalize

    return normalize("NFKC", path).casefold()


def under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it, compared folded."""
    p, f = fold(path), fold(folder).rstrip("/")
    return p == f or p.startswith(f + "/")
