"""Starting baton's background work in a process of its own, which no hook waits for.

A hook only calls :func:`kick` (an export, when ``BATON_TELEMETRY=1`` and no sender is running) or
:func:`detach` (after a session ended: catch the figures up, raise the alerts that hold, export).
Before it starts one, the hook finds the export's ``OTEL_*`` settings
(:mod:`store.monitor.export_settings`) and hands them over in the sender's environment: the Claude
Code process they may come from is the hook's parent now, and no longer the parent of a sender the
hook left behind. The process gets its own session and ``/dev/null`` for stdin, stdout and stderr,
so Claude Code, which reads a hook's output to its end, never waits for it either. It is the hook
process forked (a fraction of a millisecond), or, where a process has threads or no ``fork``, a new
interpreter.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from store.base import durable
from store.monitor import exporting, figures, telemetry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence, Union

    from store.state.location import Layout

LAUNCH = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom store.monitor.launch import main\n"
          "sys.exit(main(sys.argv[2:]))\n")
PLUGIN_ROOT = Path(__file__).resolve().parents[2]


def busy(lock: Union[str, Path]) -> bool:
    """Whether a process holds the lock ``lock`` now (never waits for it; without locks, as on
    Windows, False: at most a duplicate export)."""
    return durable.held(lock)


def kick(layout: Layout, env: Mapping[str, str]) -> bool:
    """Start a detached sender when telemetry is on and none is running; True when one started."""
    if not telemetry.enabled(env):
        return False
    try:
        os.makedirs(figures.folder(layout), exist_ok=True)
        if busy(exporting.lock_path(layout)):
            return False
    except OSError:
        return False
    return detach(layout, env, "export")


def sender_env(layout: Layout, env: Mapping[str, str]) -> Optional[Dict[str, str]]:
    """``env`` with the export's settings found now, for a sender; ``None`` when they turn the
    export off, or cannot be used (why is kept where ``baton status`` shows it)."""
    from store.base.errors import BatonError
    from store.monitor import export_settings

    try:
        settings = export_settings.find(env, str(layout.project))
    except BatonError as exc:
        exporting.note_error(layout, exc.message)
        return None
    return None if telemetry.switched_off(settings.values) else export_settings.carry(env, settings)


def detach(layout: Layout, env: Mapping[str, str], task: str) -> bool:
    """Start ``task`` ("export", or "settle": catch the figures up, raise alerts, then export when
    telemetry is on) in a process of its own that the hook does not wait for. A hook process forks,
    which costs it a fraction of a millisecond; elsewhere a new interpreter starts."""
    if telemetry.enabled(env):
        found = sender_env(layout, env)
        if found is None and task == "export":
            return False
        env = found if found is not None else {**env, "BATON_TELEMETRY": "0"}  # settle, but send nothing
    try:
        if hasattr(os, "fork") and _hook_process():
            _fork(layout, dict(env), task)
        else:
            _spawn([sys.executable, "-S", "-c", LAUNCH, str(PLUGIN_ROOT), str(layout.root), str(layout.project), task],
                   dict(env))
    except OSError:
        return False  # not this time; the next hook, or `baton status`, catches up and nothing is lost
    return True


def _hook_process() -> bool:
    """A hook process (``python3 -S -c <bootstrap>``, one thread, about to exit), where forking is
    cheap and safe; a long-lived process with threads (a test runner) starts an interpreter."""
    threading = sys.modules.get("threading")
    return sys.argv[:1] == ["-c"] and (threading is None or threading.active_count() == 1)


def _fork(layout: Layout, env: Dict[str, str], task: str) -> None:
    """Fork the hook process; the child does the work. The hook exits within milliseconds without
    waiting for it, and the child, orphaned then, is reaped by init."""
    if os.fork():
        return
    code = 0
    try:  # the child: never back into the hook's code path, whatever happens
        os.setsid()
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # no pipe to Claude Code stays open in the worker
            os.dup2(quiet, fd)
        run_task(layout, env, task)
    except BaseException:  # noqa: BLE001 - nothing may escape into the hook's code path
        code = 1
    finally:
        os._exit(code)


def _spawn(argv: List[str], env: Dict[str, str]) -> None:
    if hasattr(os, "posix_spawn"):
        quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        os.posix_spawn(argv[0], argv, env, file_actions=quiet, setsid=True)
        return
    import subprocess  # pragma: no cover - Windows

    flags = getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,  # pragma: no cover
                     stderr=subprocess.DEVNULL, close_fds=True, creationflags=flags)


def main(argv: Sequence[str]) -> int:
    """``<state dir> <project dir> [export|settle]``: one detached task; never prints, exits 0."""
    from store.state.location import Layout

    run_task(Layout(Path(argv[0]), Path(argv[1])), os.environ, argv[2] if len(argv) > 2 else "export")
    return 0


def run_task(layout: Layout, env: Mapping[str, str], task: str) -> None:
    """The detached work itself; a failure is kept where ``baton status`` shows it."""
    try:
        if task == "settle":
            from store.monitor import watch
            from store.state.job import Job

            watch.settle(Job(layout, env))
            if not telemetry.enabled(env):
                return
        if not busy(exporting.lock_path(layout)):
            exporting.run(layout, env)
    except Exception as exc:  # noqa: BLE001 - a detached process has no one to tell but the export state
        exporting.note_error(layout, f"{task}: {type(exc).__name__}: {exc}")
