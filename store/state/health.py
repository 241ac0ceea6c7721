"""Visible failures: a hook that fails open logs one line and the next brief says DEGRADED.

``errors.log`` (bounded, one rotation) keeps the lines; ``degraded.json`` keeps the count and the
latest failure so the brief can report it without reading the log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from store.base import durable
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

LOG_CAP = 64 * 1024


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def report_failure(layout: Layout, hook: str, message: str, fallback_dir: str = "") -> None:
    """Record that ``hook`` failed; never raises (it runs inside failure handling)."""
    line = json.dumps({"ts": _now(), "hook": hook, "error": message[:500]}) + "\n"
    for folder in (str(layout.root), fallback_dir):
        if not folder or not os.path.isdir(folder):
            continue
        try:
            log = os.path.join(folder, "errors.log")
            if os.path.exists(log) and os.path.getsize(log) > LOG_CAP:
                os.replace(log, log + ".1")
            durable.append_line(Path(log), line.encode("utf-8"), sync=False)
            state = read_degraded(layout) if folder == str(layout.root) else None
            count = int(state.get("count", 0)) + 1 if state else 1
            info = {"count": count, "ts": _now(), "hook": hook, "error": message[:200]}
            durable.atomic_write(Path(os.path.join(folder, "degraded.json")), json.dumps(info).encode(), sync=False)
            return
        except (OSError, ValueError):
            continue


def read_degraded(layout: Layout) -> Optional[Dict[str, Any]]:
    try:
        with open(layout.root / "degraded.json", "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def degraded_news(layout: Layout, last_record_ts: str) -> Optional[str]:
    """The DEGRADED line, when a hook failed after the last ledger record."""
    info = read_degraded(layout)
    if not info or str(info.get("ts", "")) < last_record_ts:
        return None
    return (f"DEGRADED: baton's {info.get('hook', '?')} hook failed {info.get('count', 1)} time(s); outcomes "
            f"may be missing (see .baton/errors.log); latest {info.get('ts')}: {info.get('error', '')}")
