"""The sandbox one Bash command runs in: a :class:`Policy` turned into bubblewrap's arguments.

Everything is read-only (``--ro-bind / /``) but the job's scratch /tmp and /var/tmp (the host's,
seen through an overlay whose changes stay in the job, :mod:`store.sandbox.scratch`; a private folder
where no overlay can be mounted), the home folder's package caches, the step's writable paths and,
with ``git: rw``, the repository's objects and index. On top,
always: the never-writable paths read-only, baton's own code and state outside the project
(:mod:`store.sandbox.own_paths`) read-only, ``.baton/`` read-only, the approval key's folder
replaced by an empty read-only tmpfs, the unix sockets of processes outside the job covered
(:mod:`store.sandbox.sockets`). No capability is left (``--cap-drop ALL``: a root caller
could otherwise remount), and the command gets its own pid namespace, so nothing it starts
outlives it. Later mounts stack on earlier ones, so the order below is the security argument.
"""

from __future__ import annotations

import os

from store.sandbox import own_paths, runs, scratch
from store.sandbox.mounts import Globs, inside
from store.sandbox.writable import never_globs, plan_never, plan_writes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

    from store.sandbox.mounts import Walk
    from store.sandbox.writable import NeverPlan

    Network = Union[str, Tuple[Tuple[str, ...], ...]]  # "host", "none", or groups of allowed host patterns

NAMESPACES = ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--unshare-user", "--cap-drop", "ALL")
SHARED_CACHES = (".cache", ".npm", ".cargo/registry", ".cargo/git", "go/pkg/mod", ".m2/repository", ".gradle/caches",
                 ".gradle/wrapper", ".pnpm-store", ".local/share/pnpm/store", ".yarn/berry/cache",
                 ".bun/install/cache", ".nuget/packages")
CACHE_CODE = (".cache/pre-commit", ".cache/baton")  # inside a shared cache, yet they hold code run outside
PRIVATE_CACHE_ENV = {"XDG_CACHE_HOME": "", "PIP_CACHE_DIR": "pip", "npm_config_cache": "npm", "GOCACHE": "go-build",
                     "GOMODCACHE": "go-mod", "CARGO_HOME": "cargo", "YARN_CACHE_FOLDER": "yarn",
                     "npm_config_store_dir": "pnpm", "GRADLE_USER_HOME": "gradle"}
SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock",
           "/run/dbus/system_bus_socket", "/run/systemd/private", "/run/snapd.socket")
HIDDEN_TMP = ("/tmp", "/var/tmp")
MOUNT_POINTS = (".claude", ".git/hooks", ".git/info", ".git/modules", ".git/worktrees")
PLUGIN = own_paths.PLUGIN  # `baton` works inside too


class Policy:
    """What one sandboxed command may do. Paths are absolute; ``writes`` ``None`` is the whole project;
    ``protect`` the never-writable globs; ``network`` a :data:`Network`."""

    __slots__ = ("project", "state_dir", "key_dir", "home", "writes", "protect", "git", "network", "caches",
                 "job_dir", "extra_ro", "disable_userns", "host_tmp")

    def __init__(self, project: str, state_dir: str, key_dir: str, home: str, writes: Optional[Tuple[str, ...]],
                 protect: Tuple[str, ...] = (), git: str = "rw", network: Network = "host", caches: str = "shared",
                 job_dir: str = "", extra_ro: Tuple[str, ...] = (), disable_userns: bool = False,
                 host_tmp: bool = False) -> None:
        self.project, self.state_dir = os.path.realpath(project), os.path.realpath(state_dir)
        self.key_dir, self.home = os.path.realpath(key_dir), os.path.realpath(home)
        self.writes, self.protect, self.git, self.network = writes, protect, git, network
        self.caches, self.extra_ro, self.disable_userns = caches, extra_ro, disable_userns
        self.job_dir = job_dir or job_folder(self.state_dir, home)
        self.host_tmp = host_tmp  # the host's /tmp through an overlay (the probe found it works), else a private one

    @property
    def tmp(self) -> str:
        return os.path.join(self.job_dir, "tmp")

    @property
    def tmp_outside(self) -> str:
        """Where a file made outside, before bwrap starts (the proxy's socket), shows at /tmp inside:
        the overlay's mount point (a socket works only through the file system it was made on)."""
        return scratch.view(self.job_dir, "/tmp") if self.host_tmp else self.tmp


def job_folder(state_dir: str, home: str) -> str:
    """``~/.cache/baton/jobs/<id>``: the job's private /tmp (and caches, when private) live there."""
    raw = os.path.realpath(state_dir).encode("utf-8", "surrogateescape")
    import zlib  # built in, or a small library: cheaper to load than a CRC table is to build in Python

    name = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    return os.path.join(home, ".cache", "baton", "jobs", name)


class Built:
    """The bwrap arguments (without the command), what starts before bwrap (``launch``) and what the
    after-check needs."""

    def __init__(self, args: List[str], writable: List[str], walks: List[Walk], never: NeverPlan,
                 notes: List[str], layers: Optional[List[scratch.Layer]] = None) -> None:
        self.args, self.writable, self.walks, self.never, self.notes = args, writable, walks, never, notes
        self.layers = layers or []

    def launch(self, program: Sequence[str]) -> List[str]:
        """The argv that starts ``program`` (bwrap, or the proxy or the abstract-socket scope that starts it)
        for this sandbox. The scope runs in the process that mounts the job's /tmp, when there is one."""
        if not self.layers:
            return list(program)
        from store.sandbox import landlock_scope

        scope = landlock_scope.launch()
        if list(program[:len(scope)]) == scope:
            return scratch.launcher(self.layers, scope=True) + list(program[len(scope):])
        return scratch.launcher(self.layers) + list(program)

    @property
    def work(self) -> str:
        """This run's overlay work folder, to remove once its sandbox is gone ('' when none)."""
        return os.path.dirname(self.layers[0][2]) if self.layers else ""

    def after_check(self, policy: Policy) -> Dict[str, Any]:
        """What :func:`store.sandbox.afterrun.check` needs, as JSON-ready data for the run's record."""
        return {"project": policy.project, "home": policy.home, "protect": list(policy.protect), "work": self.work,
                "scratch": [[lower, upper] for lower, upper, _, _ in self.layers],
                "writes": None if policy.writes is None else list(policy.writes), "writable": self.writable,
                "absent": self.never.absent,
                "never_walks": [{"root": w.root, "covered": w.covered, "folders": w.folders} for w in self.never.walks],
                "walks": [{"root": w.root, "islands": w.islands, "folders": w.folders, "links": w.links}
                          for w in self.walks]}


def _existing_dirs(paths: List[str]) -> List[str]:
    return [p for p in paths if os.path.isdir(p) and not os.path.islink(p)]


def _tmp_and_caches(policy: Policy, layers: List[scratch.Layer]) -> List[str]:
    os.makedirs(policy.tmp, mode=0o700, exist_ok=True)
    if layers:
        args = scratch.binds(layers)
    else:
        args = ["--bind", policy.tmp, "/tmp"] + (["--bind", policy.tmp, "/var/tmp"] * os.path.isdir("/var/tmp"))
    for root in (policy.project, policy.home, PLUGIN):  # under /tmp: the real one, read-only (its parts writable below)
        if inside(root, HIDDEN_TMP):
            args += ["--ro-bind", root, root]
    if policy.caches == "shared":
        for path in _existing_dirs([os.path.join(policy.home, rel) for rel in SHARED_CACHES]):
            args += ["--bind", path, path]
        for path in _existing_dirs([os.path.join(policy.home, rel) for rel in CACHE_CODE]):
            args += ["--ro-bind", path, path]
    else:
        cache = os.path.join(policy.job_dir, "cache")
        os.makedirs(cache, mode=0o700, exist_ok=True)
        args += ["--bind", cache, cache]
        for name, sub in PRIVATE_CACHE_ENV.items():
            args += ["--setenv", name, os.path.join(cache, sub) if sub else cache]
    return args + ["--bind", policy.tmp, policy.tmp, "--setenv", "TMPDIR", policy.tmp]


def _git(policy: Policy, writable: List[str]) -> Tuple[List[str], List[str]]:
    """Binds for ``.git`` and the folders it adds to what is writable (objects, refs, index, logs)."""
    gitdir = os.path.join(policy.project, ".git")
    if not os.path.isdir(gitdir) or os.path.islink(gitdir):
        return [], []  # no repository, or a worktree/submodule whose git folder lies elsewhere: read-only
    if policy.git == "rw" and writable:
        return ["--bind", gitdir, gitdir], [gitdir]
    return (["--ro-bind", gitdir, gitdir], []) if inside(gitdir, writable) else ([], [])


def _linked_out(areas: List[str], islands: List[str], notes: List[str]) -> List[str]:
    """Read-only binds for files in ``areas`` hard-linked to a name outside them (:mod:`store.sandbox.hardlinks`)."""
    from store.sandbox import hardlinks

    found = hardlinks.find(areas, islands)
    if found.outside:
        shown = ", ".join(found.outside[:3]) + (f" and {len(found.outside) - 3} more" if len(found.outside) > 3 else "")
        notes.append(f"{shown}: hard-linked to a file outside this step's writes, so read-only (a person can break "
                     "the link with cp)")
    if not found.complete:
        notes.append(f"past {hardlinks.MAX_ENTRIES} entries the writable paths were not checked for hard links")
    return [a for path in found.outside for a in ("--ro-bind", path, path)]


def _outside_sockets(policy: Policy) -> List[str]:
    """``/dev/null`` over the unix sockets of processes outside the job (see :mod:`store.sandbox.sockets`)."""
    from store.sandbox import sockets

    found = sockets.listed() | sockets.named(os.environ)
    again = [root for root in (policy.project, policy.home, PLUGIN) if inside(root, HIDDEN_TMP)]
    again += list(HIDDEN_TMP) if policy.host_tmp else []  # the host's /tmp seen through the overlay: cover there too
    return sockets.cover(sockets.hidden(found - set(SOCKETS), (policy.project, policy.job_dir), again))


def _own(policy: Policy) -> List[str]:
    """baton's own code and state outside the project read-only, wherever they lie (a plugin or a
    probe cache inside a writable area or a shared cache too): every later hook runs or reads them."""
    env = {**os.environ, "HOME": policy.home}
    try:
        os.makedirs(own_paths.state_dir(env), mode=0o700, exist_ok=True)  # so no command can plant one first
    except OSError:
        pass
    from store.sandbox.claude_settings import settings_files  # the person's, wherever they lie (a --settings file)

    found = [p for p in own_paths.own_paths(env) if os.path.isdir(p)]
    found += [p for p in (os.path.realpath(f) for f in settings_files(policy.project, env)) if os.path.isfile(p)]
    return [a for path in found for a in ("--ro-bind", path, path)]


def _mount_points(policy: Policy, writable: List[str], git_rw: List[str], walks: List[Walk]) -> List[str]:
    """Make, empty, the never-writable folders of :data:`MOUNT_POINTS` that are missing inside a
    writable area, so they can be bound read-only (a folder created during a command could be read by
    Claude Code or git before the after-check removes it). They are noted in the run folder and removed
    once no sandbox of the job needs them (:func:`store.sandbox.afterrun.tidy`)."""
    gitdir = os.path.join(policy.project, ".git")
    made = []
    for rel in MOUNT_POINTS:
        path = os.path.join(policy.project, rel)
        parent = os.path.dirname(path)
        if os.path.lexists(path) or not inside(path, writable) or (inside(path, [gitdir]) and not git_rw) or \
                not os.path.isdir(parent) or os.path.islink(parent):
            continue
        try:
            os.mkdir(path, 0o755)
        except OSError:
            continue
        made.append(path)
        for walk in walks:  # the after-check's walk must not take it for a new entry the command made
            if inside(path, [walk.root]):
                walk.islands.append(path)
    if made:
        runs.note_made(policy.state_dir, made)
    return made


def build(policy: Policy, lock: str = "", run: str = "") -> Built:
    """bwrap's arguments for ``policy``, in the order that makes them safe (see the module docstring).
    ``run`` names this run's overlay work folder (a fresh name when empty)."""
    layers: List[scratch.Layer] = []
    if policy.host_tmp:
        layers = scratch.layers(policy.job_dir, run or f"p{os.getpid()}-{os.urandom(4).hex()}")
        scratch.prepare(layers)
    args = list(NAMESPACES) + (["--disable-userns"] if policy.disable_userns else [])
    args += ["--unshare-net"] if policy.network != "host" else []
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"] + _tmp_and_caches(policy, layers)
    globs = Globs(policy.project, policy.home, ("**",) if policy.writes is None else policy.writes)
    plan = plan_writes(globs)
    for path in plan.rw:
        args += ["--bind", path, path]
    for path in plan.islands:
        args += ["--ro-bind", path, path]
    if policy.writes is not None:
        args += _linked_out(plan.rw, plan.islands, plan.notes)
    git_args, git_rw = _git(policy, plan.rw)
    args += git_args
    writable = plan.rw + git_rw
    _mount_points(policy, writable, git_rw, plan.walks)
    never = plan_never(never_globs(policy.project, policy.home, policy.protect, writable), writable)
    for path in never.ro + [p for p in policy.extra_ro if os.path.lexists(p)]:
        args += ["--ro-bind", path, path]
    args += _own(policy)
    os.makedirs(policy.key_dir, mode=0o700, exist_ok=True)  # made here, so no command can plant one first
    args += ["--ro-bind", policy.state_dir, policy.state_dir, "--tmpfs", policy.key_dir, "--remount-ro", policy.key_dir]
    args += [a for s in SOCKETS if os.path.exists(s) for a in ("--ro-bind", "/dev/null", s)]
    args += _outside_sockets(policy)
    if os.path.isdir("/run/user"):
        args += ["--tmpfs", "/run/user", "--remount-ro", "/run/user"]
    args += ["--setenv", "BATON_SANDBOX", "1"] + (["--lock-file", lock] if lock else [])
    return Built(args, writable, plan.walks, never, plan.notes + never.notes, layers)


class Scratch:
    """``Scratch(policy)(real)``: :func:`beyond_globs` for one policy, as the static gate asks it."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def __call__(self, real: str) -> bool:
        return beyond_globs(self.policy, real)


def beyond_globs(policy: Policy, real: str) -> bool:
    """``real`` (a resolved path) is writable in ``policy``'s sandbox though no write glob may cover it:
    the job's scratch /tmp and /var/tmp (not a project, home or plugin kept there, which stay the
    host's), the shared package caches, and git's own files in a step that may write with ``git: rw``
    (its hooks and config are never-writable, refused before this is asked)."""
    if inside(real, HIDDEN_TMP) and not inside(real, (policy.project, policy.home, PLUGIN)):
        return True
    if inside(real, [policy.tmp]):
        return True
    if policy.caches == "shared":
        caches = [os.path.join(policy.home, rel) for rel in SHARED_CACHES]
        if inside(real, caches) and not inside(real, [os.path.join(policy.home, rel) for rel in CACHE_CODE]):
            return True
    gitdir = os.path.join(policy.project, ".git")
    return policy.git == "rw" and policy.writes != () and inside(real, [gitdir]) and os.path.isdir(gitdir) and \
        not os.path.islink(gitdir)


def summary(policy: Policy) -> Dict[str, Any]:
    """What the model is told about where it may write (for the permission reason)."""
    return {"writes": "the whole project" if policy.writes is None else ", ".join(policy.writes) or "nothing",
            "git": policy.git, "network": policy.network if isinstance(policy.network, str) else "allowlist"}
