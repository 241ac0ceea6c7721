"""Whether bubblewrap can run baton's sandbox on this machine: probed once, then cached.

The probe runs ``bwrap`` with the flags the sandbox uses and checks, inside, that /tmp is private
and that no capability is left (``--cap-drop ALL`` is what keeps a root caller from undoing the
mounts); then whether the job's /tmp can be an overlay of the host's
(:func:`overlay`; ``tmp`` says why not, and the sandbox then gives a private /tmp
instead). The answer is cached in ``$XDG_STATE_HOME/baton/sandbox-probe.json`` (never writable
from inside the sandbox, so a command cannot force the fallback), keyed by bwrap's file, the kernel
and the user, for a day. That folder is baton's own state (:mod:`store.sandbox.own_paths`): no tool
writes it, so a forged "cannot run" cannot turn the sandbox off. Only absolute, system locations of
``bwrap`` are used, never PATH.
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.sandbox.own_paths import state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional, Tuple

BWRAP_PATHS = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
CACHE_SECONDS = 24 * 3600
PROBE_FLAGS = ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/",
               "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
PROBE_SCRIPT = "echo ok > /tmp/probe && read -r line < /tmp/probe && echo $line && grep '^CapEff' /proc/self/status"
NO_CAPS = "0000000000000000"


class Probe:
    """The answer: ``ok``, the bwrap path, and why not when not; ``tmp``: why the host's /tmp cannot
    be shown through an overlay ('' when it can)."""

    __slots__ = ("ok", "bwrap", "why", "tmp")

    def __init__(self, ok: bool, bwrap: str, why: str, tmp: str = "") -> None:
        self.ok, self.bwrap, self.why, self.tmp = ok, bwrap, why, tmp


def cache_path(env: Mapping[str, str]) -> str:
    return os.path.join(state_dir(env), "sandbox-probe.json")


def find_bwrap(candidates: Tuple[str, ...] = BWRAP_PATHS) -> Optional[str]:
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    return None


def cache_key(bwrap: str) -> str:
    """What a cached answer is valid for: this bwrap file, this kernel, this user."""
    st = os.stat(bwrap)
    return f"{bwrap}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}:{os.uname().release}:{os.getuid()}"


def _read_cache(env: Mapping[str, str], key: str, now: float) -> Optional[Probe]:
    try:
        with open(cache_path(env), "rb") as handle:
            data = jsonc.loads(handle.read().decode("utf-8"))
        if data["key"] == key and 0 <= now - float(data["at"]) < CACHE_SECONDS:
            return Probe(bool(data["ok"]), str(data["bwrap"]), str(data["why"]), str(data["tmp"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def save(env: Mapping[str, str], key: str, now: float, probe: Probe) -> None:
    """Cache ``probe`` (tests write a failed probe here to run the gate in its fallback)."""
    folder = state_dir(env)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        tmp = os.path.join(folder, f".sandbox-probe.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            record = {"key": key, "at": now, "ok": probe.ok, "bwrap": probe.bwrap, "why": probe.why, "tmp": probe.tmp}
            jsonc.dump(record, handle)
        os.replace(tmp, cache_path(env))
    except OSError:
        pass  # an uncached answer is only slower


def run_probe(bwrap: str, home: str = "") -> Probe:
    """Probe ``bwrap``; with ``home``, the overlay of /tmp too (its upper layers live in ``home``)."""
    import subprocess

    try:
        proc = subprocess.run([bwrap, *PROBE_FLAGS, "--", "/bin/sh", "-c", PROBE_SCRIPT], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(False, bwrap, f"bwrap could not run: {exc}")
    lines = proc.stdout.split()
    if proc.returncode != 0 or lines[:1] != ["ok"]:
        errors = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return Probe(False, bwrap, (errors[-1] if errors else f"bwrap exited {proc.returncode}")[:200])
    if lines[-1:] != [NO_CAPS]:
        return Probe(False, bwrap, "bwrap left capabilities inside the sandbox (--cap-drop ALL had no effect)")
    if not home:
        return Probe(True, bwrap, "", "not probed")
    return Probe(True, bwrap, "", overlay(home, bwrap))


def overlay(home: str, bwrap: str) -> str:
    """'' when an overlay of /tmp works here through bubblewrap (a host file seen, a write kept in the
    upper layer, the host's /tmp unchanged), else why not, in one line."""
    import subprocess
    import tempfile

    from store.sandbox import scratch

    base = os.path.join(home, ".cache", "baton")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        where = tempfile.mkdtemp(prefix="scratch-probe-", dir=base)
        seen = tempfile.mkdtemp(prefix="baton-probe-")  # a host folder under /tmp the sandbox must show
    except OSError as exc:
        return f"cannot make the probe's folders: {exc.strerror}"
    try:
        with open(os.path.join(seen, "host"), "w", encoding="ascii") as handle:
            handle.write("host\n")
        found = [("/tmp", os.path.join(where, "upper"), os.path.join(where, "work", "p"), os.path.join(where, "view"))]
        scratch.prepare(found)
        inner = f"read -r x < {seen}/host && [ \"$x\" = host ] && echo kept > {seen}/new"
        argv = [*scratch.launcher(found), bwrap, "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/",
                *scratch.binds(found), "--", "/bin/sh", "-c", inner]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        kept = os.path.join(where, "upper", os.path.relpath(seen, "/tmp"), "new")
        if proc.returncode == 0 and os.path.isfile(kept) and not os.path.exists(os.path.join(seen, "new")):
            return ""
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return (lines[-1] if lines else f"the overlay's check failed (exit {proc.returncode})")[:200]
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the overlay's check could not run: {exc}"[:200]
    finally:
        scratch.release(os.path.join(where, "work"))
        import shutil

        shutil.rmtree(where, ignore_errors=True)
        shutil.rmtree(seen, ignore_errors=True)


def bubblewrap(env: Mapping[str, str], fresh: bool = False) -> Probe:
    """Can bubblewrap run the sandbox here? Cached; ``fresh`` probes again."""
    import time

    bwrap = find_bwrap()
    if bwrap is None:
        return Probe(False, "", "bubblewrap (bwrap) is not installed")
    try:
        key = cache_key(bwrap)
    except OSError as exc:
        return Probe(False, bwrap, f"cannot stat {bwrap}: {exc.strerror}")
    now = time.time()
    cached = None if fresh else _read_cache(env, key, now)
    if cached is not None:
        return cached
    found = run_probe(bwrap, env.get("HOME") or os.path.expanduser("~"))
    save(env, key, now, found)
    return found


def forget(env: Mapping[str, str]) -> None:
    """Drop the cached answer (a sandboxed command failed in bwrap itself): the next call probes again."""
    try:
        os.unlink(cache_path(env))
    except OSError:
        pass
