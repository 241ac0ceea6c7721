"""Claude Code's environment as Claude Code itself uses it, which its hooks and its Bash tool do not
get whole: Claude Code 2.1.328 strips every ``OTEL_*`` variable from their environments, whether
the person exported it in the shell or set it in ``settings.json``.

Two layers, merged name by name as Claude Code merges them (the second wins):

1. what the CLI was started with: ``/proc/$CLAUDE_PID/environ`` on Linux, read only when that
   process is an ancestor of this one (a hook's parent is the CLI), so a ``CLAUDE_PID`` naming any
   other process reads nothing; elsewhere (macOS, Windows) this layer is empty;
2. the ``env`` of its settings, in Claude Code's order: the user's ``settings.json``, the
   project's ``.claude/settings.json`` and ``.claude/settings.local.json``, the CLI's
   ``--settings`` (Linux, from the same verified process), then the managed settings.

Only the names ``wanted`` accepts are kept; nothing here is logged or printed, since such values
(``OTEL_EXPORTER_OTLP_HEADERS``) are often secrets.
"""

from __future__ import annotations

import os
import sys

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

    Wanted = Callable[[str], bool]

MAX_HOPS = 64
MAX_ENVIRON = 1 << 20  # bytes of /proc/PID/environ read at most
MANAGED = {"linux": "/etc/claude-code/managed-settings.json",
           "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
           "win32": "C:\\ProgramData\\ClaudeCode\\managed-settings.json"}


def _proc(pid: int, name: str, limit: int = 4096) -> bytes:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def _parent(pid: int) -> int:
    stat = _proc(pid, "stat").decode("ascii", "replace")
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ", which may hold spaces
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def ancestor(pid: int) -> bool:
    """Whether process ``pid`` is this process's parent, or its parent's parent, and so on (Linux)."""
    current = os.getppid()
    for _ in range(MAX_HOPS):
        if current == pid:
            return pid > 1
        if current <= 1:
            return False
        current = _parent(current)
    return False


def cli_pid(env: Mapping[str, str]) -> Optional[int]:
    """The Claude Code process whose environment may be read: ``CLAUDE_PID`` when it is an ancestor."""
    raw = env.get("CLAUDE_PID", "").strip()
    if not raw.isdigit() or not os.path.isdir("/proc/self"):
        return None
    pid = int(raw)
    return pid if ancestor(pid) else None


def launch_environment(pid: int, wanted: Wanted) -> Dict[str, str]:
    """The variables process ``pid`` was started with that ``wanted`` accepts."""
    out = {}
    for entry in _proc(pid, "environ", MAX_ENVIRON).split(b"\0"):
        name, sep, value = entry.partition(b"=")
        text = name.decode("utf-8", "replace")
        if sep and wanted(text):
            out[text] = value.decode("utf-8", "surrogateescape")
    return out


def _settings(text: str) -> Dict[str, Any]:
    """A settings object from a file path or inline JSON (``--settings`` takes both)."""
    try:
        if text.lstrip().startswith("{"):
            data = jsonc.loads(text)
        else:
            with open(text, "rb") as handle:
                data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _env_of(settings: Mapping[str, Any], wanted: Wanted) -> Dict[str, str]:
    env = settings.get("env")
    if not isinstance(env, dict):
        return {}
    return {str(k): str(v) for k, v in env.items()
            if wanted(str(k)) and isinstance(v, (str, int, float)) and not isinstance(v, bool)}


def cli_settings(pid: int) -> str:
    """The CLI's ``--settings`` value (a file or inline JSON), ``''`` when it has none."""
    argv = [a.decode("utf-8", "surrogateescape") for a in _proc(pid, "cmdline", MAX_ENVIRON).split(b"\0")]
    for i, arg in enumerate(argv):
        if arg == "--settings" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--settings="):
            return arg[len("--settings="):]
    return ""


def settings_files(env: Mapping[str, str], project: str) -> List[str]:
    """The settings files whose ``env`` Claude Code applies, lowest precedence first (the managed
    settings, highest, come after the command line's ``--settings``)."""
    home = env.get("HOME") or os.path.expanduser("~")
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    return [os.path.join(config, "settings.json"), os.path.join(project, ".claude", "settings.json"),
            os.path.join(project, ".claude", "settings.local.json")]


def environment(env: Mapping[str, str], project: str, wanted: Wanted) -> Tuple[Dict[str, str], List[str]]:
    """Claude Code's variables that ``wanted`` accepts, and where they came from (for people)."""
    values: Dict[str, str] = {}
    where: List[str] = []
    pid = cli_pid(env)
    if pid is not None:
        values.update(launch_environment(pid, wanted))
        where += [f"the environment Claude Code (process {pid}) was started with"] if values else []
    layers = [(path, _settings(path)) for path in settings_files(env, project)]
    given = cli_settings(pid) if pid is not None else ""
    if given:
        layers.append(("its --settings", _settings(given)))
    managed = MANAGED.get(sys.platform)
    if managed:
        layers.append((managed, _settings(managed)))
    for what, settings in layers:
        found = _env_of(settings, wanted)
        if found:
            values.update(found)
            where.append(f"the env of {what}")
    return values, where
