"""How long this process may wait for the job's database, whatever the server does.

Claude Code kills a hook at its timeout (10 s for SessionStart, PreToolUse and Stop), and a server
that is frozen (stopped, swapping, cut off by the network) accepts a connection or a query and
never answers. So a hook process (``hooks.adapter.main``) gets one deadline for all its database
calls together: :data:`HOOK_SECONDS`, however many calls it makes. Elsewhere (the CLI, ``baton
run``, the detached refresh) each call gets :data:`CALL_SECONDS` (``BATON_DB_SECONDS`` sets it).
A call's limit is kept three ways at once: the connection attempt is abandoned when it runs out
(``driver.connect``); the server ends our statements (``statement_timeout``) and a transaction of
ours left idle (``idle_in_transaction_session_timeout``); and a watchdog (:class:`Watch`) shuts
the socket down at the limit, so that even a server that answers nothing releases the caller.
After a call that found the server unusable, this process fails its next calls at once for
:data:`QUIET_SECONDS` (:func:`note_failure`): one wait per outage, not one per call.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

HOOK_SECONDS = 4.0  # a hook's whole database time: well inside the host's 10 s, with start-up and the rest
CALL_SECONDS = 15.0  # one call (connect, or a transaction) outside hooks
QUIET_SECONDS = 5.0  # after a failed contact, calls fail at once for this long
IDLE_SECONDS = 15.0  # the server ends a transaction of ours left idle this long (a client frozen mid-way)


def _hook_deadline() -> Optional[float]:
    """A hook process (``hooks.adapter.main`` ran) has HOOK_SECONDS in all, from its first use of
    the database (a few hundred milliseconds after it started, at most)."""
    adapter = sys.modules.get("hooks.adapter")
    return time.monotonic() + HOOK_SECONDS if getattr(adapter, "IN_HOOK", False) else None


_deadline = _hook_deadline()  # monotonic time when this process's database time runs out (a hook's)
_failed: Dict[str, Tuple[float, str]] = {}  # conninfo -> (monotonic time, cause) of the last failed contact


def limit() -> float:
    """Seconds the next call may take (0 or less: none left)."""
    per_call = _env_seconds("BATON_DB_SECONDS", CALL_SECONDS)
    if _deadline is None:
        return per_call
    return min(per_call, _deadline - time.monotonic())


def exhausted() -> str:
    """Why no call may start now ("" when one may)."""
    if limit() <= 0:
        return f"this hook's {HOOK_SECONDS:g} s for the database ran out (Claude Code stops a hook at 10 s)"
    return ""


def note_failure(conninfo: str, cause: str) -> None:
    _failed[conninfo] = (time.monotonic(), cause)


def recent_failure(conninfo: str) -> str:
    """The cause of a failed contact less than QUIET_SECONDS ago ("" when none)."""
    seen = _failed.get(conninfo)
    if seen is None or time.monotonic() - seen[0] > QUIET_SECONDS:
        return ""
    return seen[1]


def _env_seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


class Watch:
    """Shuts ``sock_fd``'s socket down if the call has not ended within ``seconds``: the blocked
    read or write in the driver then fails at once, in the caller's own thread. ``fired`` says
    whether it did (the call then failed because the server did not answer in time)."""

    def __init__(self, sock_fd: int, seconds: float) -> None:
        import threading

        self.fired = False
        self._fd, self._lock, self._over = sock_fd, threading.Lock(), False
        self._timer: Any = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> Watch:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:  # after this, the timer can no longer touch a socket the next call reuses
            self._over = True
        self._timer.cancel()

    def _fire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.fired = True
            shut(self._fd)


def shut(fd: int) -> None:
    """Shut down the socket ``fd`` for reading and writing (the descriptor itself stays open)."""
    import socket

    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()
