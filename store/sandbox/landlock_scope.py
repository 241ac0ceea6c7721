"""A sandbox with host network gets no abstract unix socket outside it: a Landlock scope, then bwrap.

Abstract unix sockets (``@name``) have no file a mount could hide; they belong to the network
namespace, and a step whose network is ``host`` shares the host's, where a session bus, an X
server or any helper may listen. Linux 6.12 added Landlock scopes (ABI 6): a process restricted
with ``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`` can connect only to abstract sockets made inside its
own domain, whatever its network. TCP, UDP and pathname sockets are untouched, so ``network:
host`` keeps working (package managers, git over HTTPS or SSH, a local database) and a test
suite's own sockets, abstract or not, work inside the command.

Run as a program before bwrap (``python3 -I -S scope.py PROGRAM ARGS...``), or, where the job's
/tmp is mounted first, in that launcher's own process (``store/sandbox/scratch.py --scope``): it sets
``no_new_privs`` (Landlock needs it; bwrap sets it anyway), restricts itself, and executes
``PROGRAM``; the scope is inherited by everything bwrap starts. On a kernel without scopes the
gate does not start it (:func:`wanted`); should the kernel refuse all the same, it says so on
stderr and still runs the command, which then shares the host's abstract sockets, as on such a
kernel (the threat model says so). Standard library only, and no import of baton: it runs with
``-I -S`` for speed.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Tuple

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture (syscalls added after 5.x are unified)
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
PR_SET_NO_NEW_PRIVS = 38
FIRST_KERNEL = (6, 12)
REFUSED = "baton: abstract unix sockets outside the sandbox stay reachable here"


def kernel(release: str) -> Tuple[int, int]:
    """(major, minor) of a kernel release string such as ``6.18.44-fc``; (0, 0) when unreadable."""
    parts = release.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1][:3] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def wanted(network: object) -> bool:
    """Whether a command with this network setting should start under the scope: host network (the
    others have their own namespace), on Linux 6.12 or later (the scope's ABI; checked for real by
    the program itself)."""
    return network == "host" and sys.platform.startswith("linux") and kernel(os.uname().release) >= FIRST_KERNEL


def launch() -> List[str]:
    """The command line that starts the scope, before the program it runs."""
    return [sys.executable or "/usr/bin/python3", "-I", "-S", os.path.abspath(__file__)]


def restrict() -> str:
    """Put this process under the abstract-socket scope; '' on success, else why not."""
    import ctypes
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 6:
        return f"Landlock ABI {abi} has no scopes (errno {ctypes.get_errno()})"
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs: errno {ctypes.get_errno()}"
    attr = struct.pack("=QQQ", 0, 0, SCOPE_ABSTRACT_UNIX_SOCKET)  # handled fs, handled net, scoped
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.c_char_p(attr), len(attr), 0)
    if ruleset < 0:
        return f"landlock_create_ruleset: errno {ctypes.get_errno()}"
    try:
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return f"landlock_restrict_self: errno {ctypes.get_errno()}"
    finally:
        os.close(ruleset)
    return ""


def main(argv: List[str]) -> int:
    """Restrict, then become ``argv`` (returns only on a usage error; a failed exec raises)."""
    if not argv:
        sys.stderr.write("usage: scope.py PROGRAM [ARGS...]\n")
        return 2
    why = restrict()
    if why:
        sys.stderr.write(f"{REFUSED} ({why})\n")
    os.execv(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
