"""Which files a step's globs cover, and their SHA-256, hashing only files whose size or mtime
changed since they were last hashed (the cache ``.baton/hashes.json``, derived and rebuildable).

Globs follow the plan's rules (``store.base.paths``): relative to the project root, ``**`` spans
folders, a folder stands for everything below it. ``.git`` and ``.baton`` are never walked.

The files are the model's to swap, so reading one never blocks and always ends: only a regular
file is hashed (a FIFO, a device or a socket is :class:`NotRegular`, found before it is opened and
again on the open descriptor, opened with ``O_NONBLOCK``), at most the size it had when opened,
and within the caller's deadline; a symlink loop is the ``OSError`` it raises.
"""

from __future__ import annotations

import os
import stat
import time

from store.base import durable, jsonc
from store.base.paths import glob_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Dict, Iterator, List, Optional, Sequence, Tuple

    from store.state.location import Layout

CACHE = "hashes.json"
MAX_FILES = 50_000
SKIP = (".git", ".baton")
RACY_SECONDS = 2.0  # a file changed this recently may change again within its mtime tick: not cached
WILD = "*?["


class TooMany(Exception):
    """The globs cover more files than a checkpoint keeps track of."""


class OutOfTime(Exception):
    """The deadline passed while walking or hashing."""


class NotRegular(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket): never opened for hashing."""


CHUNK = 1024 * 1024
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def file_sha256(path: str, deadline: Optional[float] = None) -> str:
    """SHA-256 of the regular file ``path``: never blocks (see the module docstring); raises
    :class:`NotRegular`, ``OSError`` or :class:`OutOfTime`."""
    from hashlib import sha256  # here: a check that finds nothing changed never loads it

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(f"{path} is {kind(mode)}")
    fd = os.open(path, OPEN_FLAGS)  # swapped for a FIFO since the stat: O_NONBLOCK opens it at once
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path} is {kind(st.st_mode)}")
        digest, left = sha256(), st.st_size  # a file that grows while read is hashed as it was
        while left > 0:
            chunk = os.read(fd, min(CHUNK, left))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise OutOfTime()
    finally:
        os.close(fd)
    return digest.hexdigest()


def _literal_prefix(pattern: str) -> str:
    parts = pattern.split("/")
    fixed = []
    for part in parts:
        if any(c in part for c in WILD):
            break
        fixed.append(part)
    return "/".join(fixed)


def _walk(top: str) -> Iterator[str]:
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in files:
            yield os.path.join(folder, name)


def expand(project: Path, patterns: Sequence[str], deadline: Optional[float] = None) -> List[str]:
    """The files (project-relative, ``/``-separated, sorted) the globs cover."""
    root = str(project)
    found = set()
    for raw in patterns:
        pattern = raw.strip()
        pattern = pattern[2:] if pattern.startswith("./") else pattern
        prefix = _literal_prefix(pattern.rstrip("/"))
        top = os.path.join(root, prefix) if prefix else root
        is_dir = os.path.isdir(top)  # anything else that exists (a FIFO too) is the file the glob names
        candidates = _walk(top) if is_dir else [top] if os.path.lexists(top) else []
        for full in candidates:
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if glob_match(rel, pattern) or full == top:
                found.add(rel)
                if len(found) > MAX_FILES:
                    raise TooMany(f"{', '.join(patterns)} cover more than {MAX_FILES} files; narrow the globs")
            if deadline is not None and time.monotonic() > deadline:
                raise OutOfTime()
    return sorted(found)


class Hasher:
    """SHA-256 of files, through the size-and-mtime cache; :meth:`save` writes the cache back."""

    def __init__(self, layout: Layout) -> None:
        self.path: Path = layout.root / CACHE
        self._cache: Optional[Dict[str, List[object]]] = None  # read on first use: most checks hash nothing
        self.changed = False

    @property
    def cache(self) -> Dict[str, List[object]]:
        if self._cache is None:
            try:
                data = jsonc.loads(self.path.read_bytes().decode("utf-8"))
            except (OSError, ValueError):
                data = {}
            self._cache = data if isinstance(data, dict) else {}
        return self._cache

    def sha(self, key: str, full: str, st: os.stat_result, deadline: Optional[float] = None) -> str:
        """The file's SHA-256 (raises as :func:`file_sha256` does)."""
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{key} is {kind(st.st_mode)}")
        entry = self.cache.get(key)
        if isinstance(entry, list) and entry[:2] == [st.st_size, st.st_mtime_ns] and isinstance(entry[2], str):
            return entry[2]
        digest = file_sha256(full, deadline)
        if time.time() - st.st_mtime > RACY_SECONDS:
            self.cache[key] = [st.st_size, st.st_mtime_ns, digest]
            self.changed = True
        return digest

    def save(self) -> None:
        if not self.changed or not self.path.parent.is_dir():
            return
        try:
            durable.atomic_write(self.path, jsonc.dumps(self.cache, separators=(",", ":")).encode("utf-8"), sync=False)
        except OSError:
            pass  # only a cache: the next check hashes again


def inputs_digest(project: Path, patterns: Sequence[str], hasher: Hasher,
                  deadline: Optional[float] = None) -> Tuple[str, int, List[Tuple[str, int]]]:
    """(digest of the files' paths and contents, file count, (path, mtime_ns) of each file)."""
    from hashlib import sha256

    digest, stamps = sha256(), []
    for rel in expand(project, patterns, deadline):
        full = os.path.join(str(project), rel)
        try:
            st = os.stat(full)
            content = hasher.sha(rel, full, st, deadline)
        except NotRegular as exc:
            content = f"not a regular file: {exc}"  # a FIFO or device among the inputs counts, unread
        except OSError:
            continue  # vanished while walking (or a symlink loop)
        digest.update(f"{rel}\0{content}\n".encode("utf-8", "surrogateescape"))
        stamps.append((rel, st.st_mtime_ns))
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime()
    return digest.hexdigest(), len(stamps), stamps
