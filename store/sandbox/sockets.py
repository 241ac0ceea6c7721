"""Unix sockets of processes outside the job, hidden from a sandboxed command.

A read-only mount does not stop ``connect()`` on a socket file, so an agent, a container daemon or
a terminal multiplexer listening in the home folder (``~/.ssh/agent.sock``, a rootless docker,
tmux) would run what a sandboxed command sends it. Every bound pathname socket the kernel lists
(``/proc/net/unix``, this network namespace: where such helpers listen) and those the environment
names (``SSH_AUTH_SOCK``, ``DOCKER_HOST``...) are covered with ``/dev/null`` in the sandbox, but
for the job's own: sockets inside the project (baton's broker in ``.baton/run/``, a server the job
started) and the job's folder (its private /tmp). Places the sandbox already replaces (the host's
/tmp, /var/tmp, /run/user) need nothing.

Abstract sockets have no file to cover: they live in the network namespace. A step without host
network has its own (``--unshare-net``); with host network the command starts under a Landlock
scope (:mod:`store.sandbox.landlock_scope`) where the kernel has one (Linux 6.12 and later).

What remains: a socket bound by a relative name or in another network namespace (a container's)
is not listed, and one bound outside after the command started is not covered.
"""

from __future__ import annotations

import os
import stat

from store.sandbox.mounts import inside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, List, Mapping, Set

LISTED = "/proc/net/unix"
ENV_SOCKETS = ("SSH_AUTH_SOCK", "DOCKER_HOST", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "TMUX",
               "GPG_AGENT_INFO", "PODMAN_HOST", "CONTAINER_HOST", "WAYLAND_DISPLAY", "PULSE_SERVER")
REPLACED = ("/tmp", "/var/tmp", "/run/user")  # the sandbox mounts its own there (store.sandbox.bwrap_args)
MAX_SOCKETS = 2000


def listed(table: str = LISTED) -> Set[str]:
    """The pathname sockets bound in this network namespace (abstract ones start with ``@``: skipped)."""
    found: Set[str] = set()
    try:
        with open(table, "rb") as handle:
            lines = handle.read(4 * 1024 * 1024).splitlines()[1:]
    except OSError:
        return found
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith(b"/"):
            found.add(os.fsdecode(fields[7]))
    return found


def named(env: Mapping[str, str]) -> Set[str]:
    """Socket paths the environment names (``unix:path=...``, ``unix:///...``, ``/path,pid,n``)."""
    found: Set[str] = set()
    for name in ENV_SOCKETS:
        value = env.get(name, "")
        for part in value.replace(";", ",").split(","):
            part = part.strip()
            for head in ("unix://", "unix:path=", "unix:"):
                if part.startswith(head):
                    part = part[len(head):]
            if part.startswith("/"):
                found.add(part.split(",")[0])
    runtime = env.get("XDG_RUNTIME_DIR", "")
    wayland = env.get("WAYLAND_DISPLAY", "")
    if runtime and wayland and not wayland.startswith("/"):
        found.add(os.path.join(runtime, wayland))
    return found


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def _allows(st: os.stat_result, bits: int) -> bool:
    """Whether the mode bits alone (no capability: the sandbox has none) grant ``bits`` (a user-class mask)."""
    if st.st_uid == os.getuid():
        return bool(st.st_mode & bits)
    if st.st_gid in (os.getgid(), *os.getgroups()):
        return bool(st.st_mode & (bits >> 3))
    return bool(st.st_mode & (bits >> 6))


def reachable(path: str) -> bool:
    """Whether a process without capabilities could connect to ``path``: every folder above it
    searchable and the socket writable by mode bits. One it cannot reach needs no cover, and bwrap
    could not even make the mount point there (a root caller keeps no capability in the sandbox)."""
    try:
        if not _allows(os.stat(path), stat.S_IWUSR):
            return False
        folder = os.path.dirname(path)
        while True:
            if not _allows(os.stat(folder), stat.S_IXUSR):
                return False
            parent = os.path.dirname(folder)
            if parent == folder:
                return True
            folder = parent
    except OSError:
        return False


def hidden(candidates: Iterable[str], job_folders: Iterable[str], shown_again: Iterable[str]) -> List[str]:
    """The sockets to cover: real, existing, outside ``job_folders``, and visible in the sandbox (not
    in a replaced place unless inside one of ``shown_again``, folders bound there again)."""
    keep, again = [os.path.realpath(f) for f in job_folders], list(shown_again)
    found: Set[str] = set()
    for raw in candidates:
        path = os.path.realpath(raw)
        if path in found or inside(path, keep) or not _is_socket(path) or not reachable(path):
            continue
        if inside(path, REPLACED) and not inside(path, again):
            continue
        found.add(path)
        if len(found) >= MAX_SOCKETS:
            break
    return sorted(found)


def cover(sockets: Iterable[str]) -> List[str]:
    """bwrap arguments putting ``/dev/null`` over each socket (a file over a file: connect() then fails)."""
    return [a for path in sockets for a in ("--ro-bind", "/dev/null", path)]
