"""What each session's model last saw of the job, so that it is told again only when the job changed.

``seen.json`` maps a session to a fingerprint of the last brief put in front of its model (at
session start, with a prompt, or after its own ``baton record``). A prompt whose session saw an
older brief (a plan created or edited, an approval, a record made elsewhere) gets the current one;
one that saw none gets the resume protocol too. Bounded: the brief is, and so is the file
(:data:`KEEP_SESSIONS`).
"""

from __future__ import annotations

import os

from store.base import durable, jsonc
from store.ledger.sealing import sha256_maker
from store.state.location import HOOKS_LOCK
from store.state.protocol import HEADER, session_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

    from store.state.location import Layout

NAME = "seen.json"
KEEP_SESSIONS = 50
CHANGED = "baton: this job changed since you last saw its brief (a plan, an approval or a record made elsewhere)."
AFTER_RECORD = ("NEXT", "RETRY", "WAITING", "LEFT RUNNING", "STORE", "DEGRADED", "ALERT")


def fingerprint(brief: str) -> str:
    return str(sha256_maker()(brief.encode("utf-8", "replace")).hexdigest()[:24])  # no OpenSSL to load


def _path(layout: Layout) -> str:
    return layout.file(NAME)


def _read(layout: Layout) -> Dict[str, Any]:
    try:
        with open(_path(layout), "rb") as handle:
            data = jsonc.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def last_seen(layout: Layout, session: str) -> Optional[str]:
    value = _read(layout).get(session or "-")
    return value if isinstance(value, str) else None


def mark(layout: Layout, session: str, brief: str) -> None:
    """Remember that ``session``'s model has now seen ``brief``. Best effort: where the file cannot
    be written, the brief is only given again, so a failure here must not cost the brief itself."""
    if not os.path.isdir(layout.state_dir):
        return
    try:
        with durable.locked(layout.file(HOOKS_LOCK)):
            data = _read(layout)
            data.pop(session or "-", None)  # re-insert last: the oldest session is dropped first
            data[session or "-"] = fingerprint(brief)
            while len(data) > KEEP_SESSIONS:
                data.pop(next(iter(data)))
            durable.atomic_write(_path(layout), jsonc.dumps(data, separators=(",", ":")).encode(), sync=False)
    except OSError:
        pass


def for_prompt(layout: Layout, session: str, brief: str) -> Optional[str]:
    """The context to give with a prompt: ``None`` when this session's model saw this brief."""
    before = last_seen(layout, session)
    if before == fingerprint(brief):
        return None
    mark(layout, session, brief)
    return session_context(brief) if before is None else f"{CHANGED}\n{HEADER}\n{brief}"


def after_record(layout: Layout, session: str, brief: str, remember: bool = True) -> Optional[str]:
    """After the model's own ``baton record``: the new NEXT line and any news, when they changed."""
    if remember and last_seen(layout, session) == fingerprint(brief):
        return None
    if remember:
        mark(layout, session, brief)
    lines = [line for line in brief.splitlines() if line.split(":", 1)[0] in AFTER_RECORD]
    return "baton: " + "\n".join(lines) if lines else None
