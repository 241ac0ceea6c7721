"""Hard links that would carry a write out of the step's writable areas: found, and kept read-only.

A hard link is one file under two names. Inside one sandbox none can be made across a mount
(``link()`` fails with ``EXDEV``: every writable area is its own bind mount), but one made earlier
(in a step that could write both places, by a tool before the job, by a person) outlives the
step: ``ln README.md src/x`` in a step that writes everything, then a write through ``src/x`` in
a ``src/**`` step changes README.md. ``fs.protected_hardlinks`` does not help: it only stops links
to files the user does not own. So before each command of a step with ``writes``, the writable
areas are walked (without following symlinks, on their own file system, ``.git`` skipped: git
writes its objects anew) and every regular file whose link count is higher than the names found
for it there has a name outside: it is bound read-only (the command can read it, not write it,
rename or remove it), and the model is told why.

What remains: past :data:`MAX_ENTRIES` entries the rest of an area is not checked (said in the
answer); a step without ``writes`` writes the whole project, so only a link from the project to a
file outside it matters there, and none can be made from inside the sandbox.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Set, Tuple

MAX_ENTRIES = 20_000
SKIP = (".git",)


class Linked:
    """Files with a name outside the walked areas, and whether every entry was looked at."""

    def __init__(self) -> None:
        self.outside: List[str] = []
        self.complete = True


def _entries(root: str, skip: Set[str]) -> Iterable[Tuple[str, os.stat_result]]:
    """Every entry below ``root`` with its stat (not following links; folders entered on ``root``'s file
    system only, ``.git`` and ``skip`` left out): :func:`find` keeps the regular files with more than one link."""
    try:
        device = os.lstat(root).st_dev
    except OSError:
        return
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            listed = list(os.scandir(folder))
        except OSError:
            continue
        for entry in listed:
            if entry.path in skip:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield entry.path, st
            if stat.S_ISDIR(st.st_mode) and st.st_dev == device and entry.name not in SKIP:
                stack.append(entry.path)


def find(areas: Iterable[str], read_only: Iterable[str] = ()) -> Linked:
    """The files in ``areas`` that share their inode with a name outside them (see the module docstring);
    entries in ``read_only`` (already bound read-only) are not walked."""
    found, skip, seen = Linked(), set(read_only), 0
    names: Dict[Tuple[int, int], List[str]] = {}
    links: Dict[Tuple[int, int], int] = {}
    for area in areas:
        if os.path.isfile(area) and not os.path.islink(area):
            walked: Iterable[Tuple[str, os.stat_result]] = [(area, os.lstat(area))]
        else:
            walked = _entries(area, skip)
        for path, st in walked:
            seen += 1
            if seen > MAX_ENTRIES:
                found.complete = False
                break
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                key = (st.st_dev, st.st_ino)
                names.setdefault(key, []).append(path)
                links[key] = st.st_nlink
        if not found.complete:
            break
    for key, paths in names.items():
        if len(set(paths)) < links[key]:
            found.outside.extend(sorted(set(paths)))
    found.outside.sort()
    return found
