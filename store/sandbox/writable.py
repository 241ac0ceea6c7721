"""Which paths a sandboxed command may write: the step's globs as read-write binds, and the never-writable.

:func:`plan_writes` turns write globs into read-write binds (exact, or widened with read-only
islands) and the walks the after-check repeats; :func:`plan_never` finds what must stay read-only
inside those areas whatever the globs say (protect globs and paths that run code later), binding
the existing ones read-only and naming the folders the after-check must look at for new ones.

The sandbox's size does not grow with the project's: the binds that come from walks (islands,
files bound one by one) and the never-writable binds each have a :class:`Budget` of
:data:`MAX_WALK_MOUNTS`.
Past it, or past a walk's :data:`~store.sandbox.mounts.MAX_VISITS`, the answer is always the safe
one: fewer paths writable (a folder read-only as a whole, or only its existing covered files),
with a note the model is told, never a failed call and never a file removed that was there before.
"""

from __future__ import annotations

import os

from store.sandbox.code_paths import HOME_CODE, PROJECT_CODE
from store.sandbox.mounts import (
    FORBIDDEN_ROOTS,
    Globs,
    Walk,
    existing_folder,
    inside,
    outermost,
    static_prefix,
    walk,
    whole_folder,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, List, Optional

MAX_WALK_MOUNTS = 1000  # for writes, and again for never-writables: 6,000 of bwrap's 9,000 arguments at most
NEVER_VISITS = 100_000  # a protected file not found makes its folder read-only: look further than for writes


class Budget:
    """The binds walks may still add to one sandbox."""

    def __init__(self, left: Optional[int] = None) -> None:
        self.left = MAX_WALK_MOUNTS if left is None else left

    def take(self, count: int) -> bool:
        """Spend ``count`` binds if that many are left."""
        if count > self.left:
            return False
        self.left -= count
        return True


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


def _target(glob: str, globs: Globs) -> str:
    prefix, _ = static_prefix(glob)
    return globs.absolute(prefix) if prefix not in ("", "/") else (prefix or globs.project)


def plan_writes(globs: Globs, budget: Optional[Budget] = None) -> WritePlan:
    """The binds that let a command write what ``globs`` cover, and nothing else it could keep."""
    plan, budget = WritePlan(), budget or Budget()
    widened: List[str] = []
    for glob in globs.patterns:
        whole = whole_folder(glob)
        _, wild = static_prefix(glob)
        target = globs.absolute(whole) if whole else globs.project if whole == "" else _target(glob, globs)
        if (whole is not None or not wild) and os.path.lexists(target):
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
        if not inside(root, exact):
            _widen(root, globs, plan, budget)
    plan.rw = outermost(plan.rw)
    return plan


def _widen(root: str, globs: Globs, plan: WritePlan, budget: Budget) -> None:
    found = walk(root, globs)
    if found.complete and budget.take(len(found.islands)):
        plan.rw.append(root)
        plan.islands += found.islands
        plan.walks.append(found)
    elif found.covered and budget.take(len(found.covered)):  # only the existing covered entries; none can be made
        plan.rw += found.covered
        plan.notes.append(f"{root}: too many entries to sort; only existing files there are writable")
    else:
        plan.notes.append(f"{root}: too many entries to sort; nothing there is writable by Bash (Write and Edit are)")


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
        self.notes: List[str] = []


def _touches(target: str, writable: List[str]) -> bool:
    return inside(target, writable) or any(inside(area, [target]) for area in writable)


def plan_never(never: Globs, writable: List[str], budget: Optional[Budget] = None) -> NeverPlan:
    """What must stay read-only inside ``writable`` whatever the write globs say (see :class:`NeverPlan`)."""
    plan, roots, budget = NeverPlan(), [], budget or Budget()
    for glob in never.patterns:
        prefix, wild = static_prefix(glob)
        target = _target(glob, never)
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
    budget.take(len(plan.ro))
    for root in outermost(r for r in roots if os.path.isdir(r)):
        _guard(root, never, plan, budget)
    plan.ro = outermost(plan.ro)
    return plan


def _guard(root: str, never: Globs, plan: NeverPlan, budget: Budget) -> None:
    """Bind what ``never`` covers below ``root`` read-only, one by one, else the folders that hold it,
    else ``root`` itself. Only a complete walk is repeated after the command (it removes new matches):
    an incomplete one would take the files it did not reach for new ones."""
    found = walk(root, never, NEVER_VISITS, islands=False)
    known = set(plan.ro)  # the literal never-writable paths (.claude, .git/hooks ...), bound already
    covered = [p for p in found.covered if p not in known]
    if found.complete and budget.take(len(covered)):
        plan.ro += covered
        plan.walks.append(found)
        return
    holders = outermost(os.path.dirname(p) for p in covered)
    if found.complete and all(inside(h, [root]) for h in holders) and budget.take(len(holders)):
        plan.ro += holders
        plan.walks.append(found)
        plan.notes.append(f"{root}: many protected files; the folders that hold them are read-only")
        return
    budget.take(1)
    plan.ro.append(root)
    plan.notes.append(f"{root}: too many entries to find every protected file; read-only for Bash here")
