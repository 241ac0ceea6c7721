"""Which paths a sandboxed command may write: the step's globs as read-write binds, and the never-writable.

:func:`plan_writes` turns write globs into read-write binds (exact, or widened with read-only
islands) and the walks the after-check repeats; :func:`plan_never` finds what must stay read-only
inside those areas whatever the globs say (protect globs and paths that run code later), binding
the existing ones read-only and naming the folders the after-check must look at for new ones.
"""

from __future__ import annotations

import os

from store.sandbox.code_paths import HOME_CODE, PROJECT_CODE
from store.sandbox.mounts import FORBIDDEN_ROOTS, Globs, Walk, existing_folder, inside, outermost, static_prefix, walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, List

class WritePlan:
    """Read-write binds, read-only islands on top of them, and the walks to repeat after the command."""

    def __init__(self) -> None:
        self.rw: List[str] = []
        self.islands: List[str] = []
        self.walks: List[Walk] = []
        self.notes: List[str] = []


def _area_ok(folder: str, globs: Globs) -> bool:
    if folder in FORBIDDEN_ROOTS or any(folder.startswith(r + "/") for r in FORBIDDEN_ROOTS[1:]):
        return False
    return inside(folder, [globs.project]) or not inside(globs.project, [folder])


def plan_writes(globs: Globs) -> WritePlan:
    """The binds that let a command write what ``globs`` cover, and nothing else it could keep."""
    plan = WritePlan()
    widened: List[str] = []
    for glob in globs.patterns:
        prefix, wild = static_prefix(glob)
        target = globs.absolute(prefix) if prefix not in ("", "/") else (prefix or globs.project)
        if not wild and os.path.lexists(target):
            real = os.path.realpath(target)
            if os.path.islink(target) or not _area_ok(real, globs):
                plan.notes.append(f"{glob}: a symlink or a system folder, not made writable")
            else:
                plan.rw.append(real)
            continue
        folder = existing_folder(target)
        if folder is None or not _area_ok(folder, globs):
            plan.notes.append(f"{glob}: no folder above it can be made writable")
            continue
        widened.append(folder)
    exact = outermost(plan.rw)
    for root in outermost(widened):
        if inside(root, exact):
            continue
        found = walk(root, globs)
        if found.complete:
            plan.rw.append(root)
            plan.islands += found.islands
            plan.walks.append(found)
        else:  # too much to sort: only the existing covered entries become writable, new ones cannot be made
            plan.rw += found.covered
            plan.notes.append(f"{root}: too many entries to sort; only existing files there are writable")
    plan.rw = outermost(plan.rw)
    return plan


def never_globs(project: str, home: str, protect: Iterable[str], writable: Iterable[str]) -> Globs:
    """The paths no sandboxed command may write: the plan's protect globs, and files that run code later
    (those in the home folder only when a writable area reaches it)."""
    reach = any(inside(area, [home]) or inside(home, [area]) for area in writable)
    absolute = [os.path.join(home, rel) for rel in HOME_CODE] if reach else []
    return Globs(project, home, [*PROJECT_CODE, *protect, *absolute])


class NeverPlan:
    """Never-writable paths inside the writable areas: existing ones (read-only binds), absent ones
    that a command could create (checked after), and walks for globs with wildcards."""

    def __init__(self) -> None:
        self.ro: List[str] = []
        self.absent: List[str] = []
        self.walks: List[Walk] = []


def _touches(target: str, writable: List[str]) -> bool:
    return inside(target, writable) or any(inside(area, [target]) for area in writable)


def plan_never(never: Globs, writable: List[str]) -> NeverPlan:
    """What must stay read-only inside ``writable`` whatever the write globs say (see :class:`NeverPlan`)."""
    plan, roots = NeverPlan(), []
    for glob in never.patterns:
        prefix, wild = static_prefix(glob)
        target = never.absolute(prefix) if prefix not in ("", "/") else (prefix or never.project)
        if not wild:
            if os.path.lexists(target) and _touches(target, writable):
                plan.ro.append(target)
            elif inside(target, writable):
                plan.absent.append(target)
            continue
        folder = existing_folder(target)
        if folder is None:
            continue
        one = Globs(never.project, never.home, [glob])
        for area in writable:
            if inside(folder, [area]):
                roots.append(folder)
            elif inside(area, [folder]) and (one.matches(area) or one.may_contain(area)):
                roots.append(area)
    for root in outermost(r for r in roots if os.path.isdir(r)):
        found = walk(root, never)
        plan.ro += found.covered  # existing never-writable entries: read-only
        plan.walks.append(found)
    plan.ro = outermost(plan.ro)
    return plan
