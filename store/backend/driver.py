"""psycopg 3, imported only when the PostgreSQL store is configured, and one connection per process.

Hooks run as ``python3 -S`` (no site-packages), so when psycopg is not importable as is, the
folders where it may be installed (``store.backend.psycopg_home``: the interpreter's virtual
environment, the active one, baton's own, the interpreter's site directories, the user's) are
added to ``sys.path``, without running their ``.pth`` files, and the import is tried again. When
it still fails, one line says where it looked and gives an install line that works for this
interpreter. An error that means the server cannot be used now (refused, gone, restarted, timed
out) becomes :class:`Unreachable`. How long a call may wait
is :mod:`store.backend.budget`'s. psycopg's own log lines (a rollback that failed on a lost
connection, said three times) are not printed: the one error baton reports carries the cause.
"""

from __future__ import annotations

import os
import sys

from store.backend import budget
from store.base.errors import CHECK, BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Dict, List, Optional

_connections: Dict[str, Any] = {}
WAITED_SECONDS = 1.0  # a connection attempt that failed after this long waited (a refusal takes milliseconds)


class Unreachable(BatonError):
    """The database cannot be used now; what was to be written can wait in the local queue.
    ``cause`` is the driver's own words (one line), or how long the call waited for an answer."""

    def __init__(self, cause: str, unknown: bool = False, waited: bool = False) -> None:
        super().__init__(f"the job's database cannot be reached: {cause}", CHECK)
        self.cause = cause
        self.unknown = unknown  # lost as a transaction committed: it may or may not have been written
        self.waited = waited  # the call waited its whole time for an answer (not refused at once)


def psycopg() -> ModuleType:
    """The psycopg module, or a :class:`BatonError` saying where it was looked for and how to install it."""
    try:
        import psycopg as module
    except ImportError:
        from store.backend import psycopg_home

        added = psycopg_home.site_dirs(os.environ)
        sys.path.extend(added)
        try:
            import psycopg as module
        except ImportError as exc:
            raise BatonError(_missing(exc, added)) from None
    _quiet(module)
    return module


def _missing(exc: ImportError, looked: List[str]) -> str:
    from store.backend import psycopg_home

    version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
    why = "" if exc.name == "psycopg" else f" ({' '.join(str(exc).split())[:200]})"  # found, but it does not load
    other = "".join(f"; {line}" for line in psycopg_home.mismatched(os.environ))
    return (f"the PostgreSQL store needs psycopg 3, which {sys.executable} ({version}) cannot import{why} "
            f"(looked in {', '.join(looked) or 'its own site folders'}{other}); install it with "
            f"`{psycopg_home.install_line(os.environ)}`, or unset BATON_DATABASE_URL and BATON_STORE to keep the "
            "job in files")


def _quiet(module: ModuleType) -> None:
    """psycopg logs what it ignores while giving up a lost connection ("error ignored in rollback",
    "error ignored terminating pipeline"); with no logging set up, Python prints each on stderr
    before baton's own line. A handler that drops them keeps stderr to baton's one line."""
    import logging

    logger = logging.getLogger(module.__name__)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def unreachable(exc: BaseException) -> Optional[Unreachable]:
    """``exc`` as :class:`Unreachable` when it means the server cannot be used now, else ``None``."""
    module = sys.modules.get("psycopg")
    if module is None or not isinstance(exc, module.OperationalError):
        return None
    if isinstance(exc, module.errors.TransactionRollback):  # a deadlock or serialization failure: retry
        return None
    text = " ".join(str(exc).split()) or type(exc).__name__
    return Unreachable(text[:300])


def cached(conninfo: str) -> bool:
    """True when this process already holds a connection to ``conninfo`` (it may have died since)."""
    return conninfo in _connections


def connect(conninfo: str) -> Any:
    """This process's connection to ``conninfo`` (made on first use, made again when broken),
    within the time :mod:`store.backend.budget` gives the call; :class:`Unreachable` otherwise,
    at once while an earlier call waited in vain less than ``budget.QUIET_SECONDS`` ago."""
    conn = _connections.get(conninfo)
    if conn is not None and not conn.closed and not conn.broken:
        return conn
    cause = budget.recent_failure(conninfo) or budget.exhausted()
    if cause:
        raise Unreachable(cause)
    module = psycopg()
    seconds = budget.limit()
    try:
        conn = _connect_within(module, conninfo, seconds, _parameters(module, conninfo, seconds))
        with budget.Watch(conn.fileno(), budget.limit()) as watch:  # the server's own limits for our work
            try:
                conn.execute("SELECT set_config('statement_timeout', %s, false), "
                             "set_config('idle_in_transaction_session_timeout', %s, false)",
                             (str(int(seconds * 1000)), str(int(budget.IDLE_SECONDS * 1000))))
            except module.Error as exc:
                raise failed(exc, watch.fired, seconds) from None
    except Unreachable as exc:
        if exc.waited:  # a refusal costs nothing to meet again; a wait is met once per outage
            budget.note_failure(conninfo, exc.cause)
        raise
    _connections[conninfo] = conn
    return conn


def failed(exc: BaseException, timed_out: bool, seconds: float, waited: bool = False) -> Unreachable:
    """What a driver error means to the person: a call that ran out of time says so. ``waited``:
    the error came only after a wait (libpq's own timeout), which is not to be met again at once."""
    if timed_out:
        return Unreachable(f"no answer within {seconds:.1f} s (the server may be frozen or the network down)",
                           waited=True)
    found = unreachable(exc) or Unreachable(" ".join(str(exc).split())[:300] or type(exc).__name__)
    found.waited = found.waited or waited
    return found


def _parameters(module: ModuleType, conninfo: str, seconds: float) -> Dict[str, Any]:
    """libpq's own limits, unless the conninfo sets them: the connection attempt's, and TCP
    keepalives and the user timeout, which end a connection whose peer is gone (not a frozen one:
    its kernel still answers; the watchdog ends those)."""
    extra: Dict[str, Any] = {}
    given = conninfo
    if "connect_timeout" not in given and not os.environ.get("PGCONNECT_TIMEOUT"):
        extra["connect_timeout"] = str(max(2, int(seconds + 0.999)))  # whole seconds, 2 at least (libpq's rule)
    if "keepalives" not in given:
        extra.update(keepalives="1", keepalives_idle="10", keepalives_interval="5", keepalives_count="3")
    if "tcp_user_timeout" not in given and module.pq.version() >= 120000:
        extra["tcp_user_timeout"] = str(int(budget.CALL_SECONDS * 1000))
    return extra


def _connect_within(module: ModuleType, conninfo: str, seconds: float, extra: Dict[str, Any]) -> Any:
    """``module.connect`` in a helper thread, waited for ``seconds`` at most: libpq's own timeout
    counts per address tried (``localhost`` is two), and a frozen server accepts and never answers.
    A connection that arrives after the wait was given up is closed by the helper."""
    import threading

    box: Dict[str, Any] = {}
    lock = threading.Lock()

    def attempt() -> None:
        try:
            made = module.connect(conninfo, autocommit=True, application_name="baton", **extra)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as it is
            box["error"] = exc
            return
        with lock:
            if not box.get("abandoned"):
                box["conn"] = made
                return
        made.close()

    import time

    helper = threading.Thread(target=attempt, name="baton-connect", daemon=True)
    began = time.monotonic()
    helper.start()
    helper.join(max(0.0, seconds))
    with lock:
        if "conn" in box:
            return box["conn"]
        box["abandoned"] = True
    if "error" in box:
        raise failed(box["error"], False, seconds, time.monotonic() - began >= WAITED_SECONDS)
    raise failed(TimeoutError(), True, seconds)


def forget(conninfo: str) -> None:
    """Drop this process's connection (after an error left it unusable)."""
    conn = _connections.pop(conninfo, None)
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection may fail any way it likes
            pass
