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
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterable, Optional


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


_COMPILED: Dict[str, re.Pattern[str]] = {}


def _regex(pattern: str) -> re.Pattern[str]:
    found = _COMPILED.get(pattern)
    if found is None:
        found = _COMPILED[pattern] = _compile(pattern)
    return found


def _compile(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


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
    return _regex(pattern).fullmatch(path) is not None


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
