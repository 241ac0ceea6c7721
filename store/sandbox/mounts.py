"""How write globs become bind mounts: exact where a folder is the glob, islands plus an after-check where not.

Bind mounts have no globs. A glob whose fixed part is an existing folder followed by ``**``
(``src/**``, and ``**``, the whole project) is bound read-write exactly. Any other glob
(``docs/*.md``, ``*.md``, a file not yet created) widens to the deepest existing folder above it:
that folder is bound read-write, every existing entry in it that the globs do not cover becomes a
read-only "island" (bound on top), and new entries the globs do not cover are removed after the
command (:mod:`store.sandbox.afterrun`). Paths that must never be written (protect globs, files that
run code later) get the opposite treatment: existing ones are bound read-only, new ones are removed
after the command. A walk looks at :data:`MAX_VISITS` entries at most, and globs are matched by one
compiled expression with ``paths.glob_match``'s meaning, so a big project costs milliseconds.
"""

from __future__ import annotations

import os

from store.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, List, Optional, Pattern, Tuple

MAX_VISITS = 20000  # entries one walk may look at before it gives up (what then is the caller's choice)
MAX_ISLANDS = 1000
FORBIDDEN_ROOTS = ("/", "/proc", "/dev", "/sys", "/run")
_WILD = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
COMPILE_AFTER = 200  # paths matched one by one before the globs are compiled into one expression


def normal(glob: str, home: str) -> str:
    """A glob as ``paths.glob_match`` reads it: trimmed, ``~`` expanded, folder suffixes dropped."""
    glob = glob.strip()
    if glob == "~" or glob.startswith("~/"):
        glob = home + glob[1:]
    while glob.endswith("/**") or (glob.endswith("/") and len(glob) > 1):
        glob = glob[:-3] if glob.endswith("/**") else glob[:-1]
    return glob[2:] if glob.startswith("./") else glob


def could_contain(dir_parts: List[str], pattern_parts: List[str]) -> bool:
    """Some path below the folder ``dir_parts`` may match ``pattern_parts`` (generous when unsure)."""
    for i, part in enumerate(dir_parts):
        if i >= len(pattern_parts):
            return False
        head = pattern_parts[i]
        if "**" in head:
            return True
        if not paths.segment_match(part, head):
            return False
    return len(pattern_parts) > len(dir_parts)


def glob_regex(patterns: Iterable[str]) -> Optional[Pattern[str]]:
    """One expression that matches a path exactly when ``paths.glob_match`` matches it with one of
    ``patterns`` (``*`` and ``?`` within a segment, ``**`` across, ``**/`` any folders or none, and a
    match of a folder covers what is below it); ``None`` for no pattern."""
    import re  # the sandbox's walks only: a hook that checks one write against the globs never needs it

    parts = []
    for pattern in patterns:
        pattern = pattern.strip()
        while pattern.endswith("/**") or pattern.endswith("/"):
            pattern = pattern[:-3] if pattern.endswith("/**") else pattern[:-1]
        pattern = pattern[2:] if pattern.startswith("./") else pattern
        if pattern:
            parts.append("".join(_WILD.get(t) or re.escape(t) for t in paths.tokens(pattern)))
    return re.compile("(?:" + "|".join(parts) + r")(?:/.*)?\Z", re.DOTALL) if parts else None


class Globs:
    """Globs over one project, relative ones and absolute ones, matched against absolute paths."""

    def __init__(self, project: str, home: str, globs: Iterable[str]) -> None:
        self.project, self.home = project, home
        self.patterns = [g for g in (normal(x, home) for x in globs) if g]
        self._relative_globs = [g for g in self.patterns if not g.startswith("/")]
        # as paths.allowed reads them: a literal absolute path is resolved, a glob is not
        self._absolute_globs = [g if "*" in g else os.path.realpath(g) for g in self.patterns if g.startswith("/")]
        self._calls = 0
        self._compiled: Optional[Tuple[Optional[Pattern[str]], Optional[Pattern[str]]]] = None

    def absolute(self, glob: str) -> str:
        return glob if glob.startswith("/") else os.path.join(self.project, glob)

    def matches(self, path: str) -> bool:
        """``path`` (absolute, resolved) is covered by one of the globs (``paths.allowed``'s rules)."""
        rel = paths.relative(path, self.project)
        self._calls += 1
        if self._compiled is None and self._calls < COMPILE_AFTER:  # a small walk does without importing re
            return any(paths.glob_match(path, g) for g in self._absolute_globs) or (
                rel is not None and any(paths.glob_match(rel, g) for g in self._relative_globs))
        if self._compiled is None:
            self._compiled = glob_regex(self._absolute_globs), glob_regex(self._relative_globs)
        absolute, relative = self._compiled
        return (absolute is not None and absolute.match(path) is not None) or (
            rel is not None and relative is not None and relative.match(rel) is not None)

    def may_contain(self, folder: str) -> bool:
        rel = paths.relative(folder, self.project)
        for glob in self.patterns:
            if glob.startswith("/"):
                parts, pattern = folder.strip("/").split("/"), glob.strip("/").split("/")
            elif rel is None:
                continue
            else:
                parts, pattern = (rel.split("/") if rel else []), glob.split("/")
            if could_contain(parts, pattern):
                return True
        return False


def whole_folder(glob: str) -> Optional[str]:
    """The folder a glob covers entirely (``**`` -> ``""``, the project; ``src/**/*`` -> ``src``), or ``None``."""
    prefix, wild = static_prefix(glob)
    rest = glob[len(prefix):].strip("/").split("/") if wild else []
    if not wild or not rest or any(part not in ("**", "*") for part in rest):  # "a/*" covers what is below a/x
        return None
    return prefix


def static_prefix(glob: str) -> Tuple[str, bool]:
    """The path before the first wildcard segment, and whether the glob has a wildcard at all."""
    parts = glob.split("/")
    for i, part in enumerate(parts):
        if "*" in part or "?" in part:
            return "/".join(parts[:i]) or ("/" if glob.startswith("/") else ""), True
    return glob, False


def existing_folder(path: str) -> Optional[str]:
    """The deepest existing ancestor folder of ``path`` (itself included) reached without a symlink."""
    while True:
        if os.path.isdir(path) and not os.path.islink(path):
            return path
        if os.path.lexists(path):
            return None  # a file or a symlink where a folder would have to be
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


class Walk:
    """One widened folder: what already exists in it, sorted by what the globs say about it."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.islands: List[str] = []  # existing entries the globs do not cover: bound read-only
        self.folders: List[str] = [root]  # existing folders that may hold covered entries: walked again after
        self.links: List[Tuple[str, str]] = []  # existing uncovered symlinks (cannot be bound): restored after
        self.covered: List[str] = []  # existing entries the globs cover (the fallback binds them one by one)
        self.complete = True


def walk(root: str, globs: Globs, limit: int = 0, islands: bool = True) -> Walk:
    """Sort what exists below ``root`` (see :class:`Walk`); stops being ``complete`` past ``limit``
    entries (:data:`MAX_VISITS` by default) or, when the islands will be bound, :data:`MAX_ISLANDS`."""
    found, stack, visits, limit = Walk(root), [root], 0, limit or MAX_VISITS
    most = MAX_ISLANDS if islands else limit
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            visits += 1
            if visits > limit or len(found.islands) > most:
                found.complete = False
                return found
            path = entry.path
            if globs.matches(path):
                found.covered.append(path)
            elif entry.is_symlink():
                found.links.append((path, os.readlink(path)))
            elif entry.is_dir(follow_symlinks=False) and globs.may_contain(path):
                found.folders.append(path)
                stack.append(path)
            else:
                found.islands.append(path)
    return found


def inside(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def outermost(folders: Iterable[str]) -> List[str]:
    """The folders that are not inside another one of them, shortest first."""
    kept: List[str] = []
    for path in sorted(set(folders), key=len):
        if not inside(path, kept):
            kept.append(path)
    return kept
