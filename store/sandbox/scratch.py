"""The job's scratch space: the host's /tmp and /var/tmp seen through an overlay whose changes stay in the job.

Inside the sandbox ``/tmp`` shows every file the host has there (a venv, a data file, a HOME or a
cache kept under /tmp), and what a command writes, deletes or renames there lands in the job's own
folder (``~/.cache/baton/jobs/<job>/tmp``, the overlay's upper layer), where the job's next call
finds it; the host's /tmp never changes. bubblewrap before 0.10 cannot mount an overlay, so this
module is also a small program that runs before bwrap::

    python3 -I -S scratch.py [--scope] LOWER UPPER WORK VIEW [LOWER UPPER WORK VIEW ...] -- PROGRAM ARGS...

It enters a mount namespace of its own (in a user namespace of its own, the caller's uid and gid
mapped to themselves as bwrap maps them, unless it is root), mounts for each LOWER an overlay at
VIEW (a folder of the job's), and executes PROGRAM (bwrap, whose arguments bind VIEW at LOWER).
Paths bwrap binds are still the host's: only VIEW changes in that namespace. Where an overlay
cannot be made in this call (a mount below /tmp, locked in a user namespace), the job's upper layer
alone is bound there and stderr says so. If no mount can be made, nothing runs: it says why on
stderr and exits 1, and PostToolUse drops the cached probe so the next call probes again (and falls
back to a private /tmp if the overlay cannot work here; :func:`store.sandbox.probe.overlay` checks).
With ``--scope`` it then puts itself under the abstract-socket scope
(:mod:`store.sandbox.landlock_scope`) before executing PROGRAM, in its own process: one Python start
fewer than running that module as a program of its own between this one and bwrap.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Sequence, Tuple

    Layer = Tuple[str, str, str, str]  # lower (host folder), upper (the job's), work (this run's), view (mount point)

CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MS_BIND, MS_REC, MS_SLAVE = 0x1000, 0x4000, 0x80000
LOWERS = (("/tmp", "tmp"), ("/var/tmp", "var-tmp"))  # host folder, and its name in the job's folder
HERE = os.path.abspath(__file__)
FAILED = "baton: the sandbox could not mount the job's /tmp"


def view(job_dir: str, lower: str) -> str:
    """The mount point of ``lower``'s overlay (as the program between this module and bwrap sees it)."""
    return os.path.join(job_dir, "mnt", dict(LOWERS)[lower])


def layers(job_dir: str, run: str) -> List[Layer]:
    """The overlays for one run: each existing host folder of :data:`LOWERS`, its upper layer in the
    job's folder, a work folder of this run's own (two overlays may not share one) and its mount point."""
    found = []
    for lower, name in LOWERS:
        if os.path.isdir(lower) and not os.path.islink(lower):
            found.append((lower, os.path.join(job_dir, name), os.path.join(job_dir, "work", run, name),
                          view(job_dir, lower)))
    return found


def prepare(found: Sequence[Layer]) -> None:
    """Make the upper layers and mount points (0700), and this run's empty work folders."""
    for run in dict.fromkeys(os.path.dirname(work) for _, _, work, _ in found):
        release(run)  # a retried call reuses its id: start from nothing
    for _, upper, work, view in found:
        for path in (upper, view, work):
            os.makedirs(path, mode=0o700, exist_ok=True)


def launcher(found: Sequence[Layer], python: str = "", scope: bool = False) -> List[str]:
    """The argv that starts this program before bwrap (``--`` last: bwrap's own argv follows); with
    ``scope``, it puts itself under the abstract-socket scope too."""
    args = [python or sys.executable or "/usr/bin/python3", "-I", "-S", HERE, *(["--scope"] if scope else [])]
    for layer in found:
        args += list(layer)
    return args + ["--"]


def binds(found: Sequence[Layer]) -> List[str]:
    """bwrap's arguments that put each overlay where the host's folder is."""
    return [a for _, _, _, view in found for a in ("--bind", view, _lower_of(found, view))]


def _lower_of(found: Sequence[Layer], view: str) -> str:
    return next(lower for lower, _, _, v in found if v == view)


def release(work_run: str) -> None:
    """Remove a run's work folder once its overlays are gone (the kernel leaves a mode-0 ``work`` in it)."""
    try:
        mode = os.lstat(work_run).st_mode
    except OSError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(work_run)
        return
    try:
        os.chmod(work_run, 0o700)
        names = os.listdir(work_run)
    except OSError:
        return
    for name in names:
        release(os.path.join(work_run, name))
    try:
        os.rmdir(work_run)
    except OSError:
        pass


def _escape(path: str) -> str:
    """A path as overlayfs reads it in its options (``\\``, ``,`` and ``:`` are special there)."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str) -> OSError:
    import ctypes

    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def _unshare(libc: Any) -> None:
    """A mount namespace of our own. Root takes one in its own user namespace, so the host's mounts
    below /tmp are not locked there (a locked one makes the overlay fail); anyone else, and root
    without the capability (a container), takes a user namespace too, its ids mapped to themselves."""
    if os.getuid() == 0 and libc.unshare(CLONE_NEWNS) == 0:
        return
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise _fail("unshare")
    _write("/proc/self/setgroups", "deny")  # required before gid_map for an unprivileged caller
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def enter(found: Sequence[Layer]) -> List[str]:
    """Enter a mount namespace of our own and mount each overlay at its view (raises OSError). Where an
    overlay cannot be made (a mount below the host's folder, locked in our user namespace) its upper
    layer alone is bound there, a private folder for this call: the notes say so."""
    libc = _libc()
    _unshare(libc)
    if libc.mount(b"none", b"/", None, MS_REC | MS_SLAVE, None) != 0:  # nothing mounted here reaches the host
        raise _fail("mount --make-rslave /")
    notes = []
    for lower, upper, work, view in found:
        os.makedirs(work, mode=0o700, exist_ok=True)
        # index=off: the job's calls share one upper layer (a background server and the next command)
        options = f"lowerdir={_escape(lower)},upperdir={_escape(upper)},workdir={_escape(work)},userxattr,index=off"
        target = view.encode("utf-8", "surrogateescape")
        if libc.mount(b"baton-scratch", target, b"overlay", 0, options.encode("utf-8", "surrogateescape")) == 0:
            continue
        why = _fail(f"overlay on {lower}")
        if libc.mount(upper.encode("utf-8", "surrogateescape"), target, None, MS_BIND, None) != 0:
            raise why
        notes.append(f"baton: {lower} in this call is the job's own, without the host's files ({why.strerror})")
    return notes


def parse(argv: Sequence[str]) -> Tuple[List[Layer], List[str]]:
    """(layers, the program's argv) from this program's arguments (without ``--scope``)."""
    if "--" not in argv:
        raise ValueError("expected LOWER UPPER WORK VIEW ... -- PROGRAM ARGS")
    at = list(argv).index("--")
    head, program = list(argv[:at]), list(argv[at + 1:])
    if len(head) % 4 or not program:
        raise ValueError("expected LOWER UPPER WORK VIEW ... -- PROGRAM ARGS")
    return [(head[i], head[i + 1], head[i + 2], head[i + 3]) for i in range(0, len(head), 4)], program


def scope() -> None:
    """Put this process under the abstract-socket scope (as :mod:`store.sandbox.landlock_scope` does run
    as a program: should the kernel refuse, stderr says so and the command still runs)."""
    if __name__ == "__main__":  # run as a program (-I -S): baton's folder is not on the path yet
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
    from store.sandbox import landlock_scope

    why = landlock_scope.restrict()
    if why:
        sys.stderr.write(f"{landlock_scope.REFUSED} ({why})\n")


def main(argv: Sequence[str]) -> int:
    scoped = bool(argv) and argv[0] == "--scope"
    try:
        found, program = parse(argv[1:] if scoped else argv)
        for note in enter(found):
            sys.stderr.write(note + "\n")
    except (OSError, ValueError) as exc:  # PostToolUse drops the cached probe when it sees this line
        sys.stderr.write(f"{FAILED} ({exc}); nothing ran. The next call checks again whether it can, and falls "
                         "back to a private /tmp if not.\n")
        return 1
    if scoped:
        scope()
    os.execv(program[0], program)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
