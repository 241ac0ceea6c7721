"""Where the hooks' counters live: ``counters.json``, read whole (or as empty when missing or
damaged) and replaced atomically by writers holding ``hooks.lock``."""

from __future__ import annotations

from store.base import jsonc
from store.state.location import COUNTERS, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping


def read_counters(layout: Layout) -> Dict[str, Any]:
    try:
        with open(layout.file(COUNTERS), "rb") as handle:  # a path string: the gate reads counters without pathlib
            data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_counters(layout: Layout, counters: Mapping[str, Any]) -> None:
    """Replace counters.json; call it holding ``layout.hooks_lock``, as every writer does."""
    from store.base import durable  # the gate reads counters; only the recorders write them

    durable.atomic_write(layout.file(COUNTERS), jsonc.dumps(counters, separators=(",", ":")).encode(), sync=False)
