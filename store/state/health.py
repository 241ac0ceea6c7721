"""Visible failures: a hook that fails open logs one line and the next brief says DEGRADED; a store
that cannot be written (full disk, read-only, no permission) is named in the brief while it lasts.

``errors.log`` (bounded, one rotation) keeps the lines; ``degraded.json`` keeps the count and the
latest failure so the brief can report it without reading the log. When ``.baton/`` itself cannot
be written they go to the plugin's data folder instead, marked with the job they belong to.
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.state.location import LEDGER, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

LOG_CAP = 64 * 1024
FREE_MIN = 64 * 1024  # below this many free bytes the next record may not fit


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def report_failure(layout: Layout, hook: str, message: str, fallback_dir: str = "") -> None:
    """Record that ``hook`` failed; never raises (it runs inside failure handling)."""
    from store.base import durable

    job = layout.state_dir
    line = jsonc.dumps({"ts": _now(), "hook": hook, "job": job, "error": message[:500]}) + "\n"
    for folder in (job, fallback_dir):
        if not folder or not os.path.isdir(folder):
            continue
        try:
            log = os.path.join(folder, "errors.log")
            if os.path.exists(log) and os.path.getsize(log) > LOG_CAP:
                os.replace(log, log + ".1")
            durable.append_line(log, line.encode("utf-8"), sync=False)
            state = _read_degraded(os.path.join(folder, "degraded.json"))
            count = int(state.get("count", 0)) + 1 if state and state.get("job") == job else 1
            info = {"count": count, "ts": _now(), "hook": hook, "job": job, "error": message[:200]}
            durable.atomic_write(os.path.join(folder, "degraded.json"), jsonc.dumps(info).encode(), sync=False)
            return
        except (OSError, ValueError):
            continue


def _read_degraded(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_degraded(layout: Layout, env: Optional[Mapping[str, str]] = None) -> Optional[Dict[str, Any]]:
    """The latest failure of this job: from ``.baton/degraded.json``, or from the plugin data folder's
    when that one is newer and names this job (written there because ``.baton/`` could not be)."""
    found = _read_degraded(layout.file("degraded.json"))
    spare = (env or {}).get("CLAUDE_PLUGIN_DATA", "")
    other = _read_degraded(os.path.join(spare, "degraded.json")) if spare else None
    if other and other.get("job") == layout.state_dir and str(other.get("ts", "")) > str((found or {}).get("ts", "")):
        return other
    return found


def degraded_news(layout: Layout, last_record_ts: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The DEGRADED line, when a hook failed after the last ledger record."""
    info = read_degraded(layout, env)
    if not info or str(info.get("ts", "")) < last_record_ts:
        return None
    return (f"DEGRADED: baton's {info.get('hook', '?')} hook failed {info.get('count', 1)} time(s); outcomes "
            f"may be missing (see .baton/errors.log); latest {info.get('ts')}: {info.get('error', '')}")


def write_problem(layout: Layout) -> str:
    """Why baton cannot write this job's state now (read-only, no permission, disk full), or ``""``.
    A few system calls: cheap enough for every brief."""
    root = layout.state_dir
    try:
        stats = os.statvfs(root)
    except (OSError, AttributeError):  # no statvfs on Windows
        return ""
    if stats.f_flag & getattr(os, "ST_RDONLY", 1):
        return f"read-only file system: {root}"
    for path in (root, layout.file(LEDGER)):
        if os.path.exists(path) and not os.access(path, os.W_OK):
            return f"permission denied: {path}"
    if stats.f_bavail * stats.f_frsize < FREE_MIN:
        return f"disk full ({stats.f_bavail * stats.f_frsize} bytes free): {root}"
    return ""
