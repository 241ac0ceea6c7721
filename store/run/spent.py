"""What the job has spent so far, caught up with the session that just ended, for the next one's caps.

The hooks keep the job's totals in ``counters.json`` (see :mod:`store.monitor.watch`): the Stop hook
folds a session's transcript at the end of each turn and SessionEnd leaves its last lines to a
detached process, so right after a session ends the totals can lag by its last turn. Before each
session ``baton run`` folds everything there is, as ``baton status`` does, so the turns, tokens and
cost it passes on as caps, and the limits it checks, count every session so far. A store that
cannot be written still gives the counters as they are.
"""

from __future__ import annotations

import os

from store.base import durable
from store.monitor.counters import read_counters, save_counters

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping

    from store.state.job import Job


def caught_up(job: Job) -> Dict[str, Any]:
    """The job's counters with every transcript, event and record folded in (saved for the hooks)."""
    from store.monitor import watch

    layout = job.layout
    if not os.path.isdir(layout.state_dir):
        return read_counters(layout)
    try:
        with durable.locked(layout.hooks_lock):
            counters = read_counters(layout)
            watch.catch_up(job, counters, "", "")
            save_counters(layout, counters)
    except OSError:  # a read-only or full .baton/: the counters as the hooks last saved them
        return read_counters(layout)
    return counters


def used(counters: Mapping[str, Any], key: str) -> float:
    """A running total from the counters (0 when missing or not a number)."""
    value = counters.get(key, 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
