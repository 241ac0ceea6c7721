"""psycopg 3, imported only when the PostgreSQL store is configured, and one connection per process.

Hooks run as ``python3 -S`` (no site-packages), so when psycopg is not importable as is, the
folders where it may be installed (``store.backend.psycopg_home``: the interpreter's virtual
environment, the active one, baton's own, the interpreter's site directories, the user's) are
added to ``sys.path``, without running their ``.pth`` files, and the import is tried again. When
it still fails, one line says where it looked and gives an install line that works for this
interpreter. An error that means the server cannot be used now (refused, gone, restarted, timed
out) becomes :class:`Unreachable`.
"""

from __future__ import annotations

import os
import sys

from store.base.errors import CHECK, BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Dict, List, Optional

CONNECT_TIMEOUT = "5"  # seconds, unless the conninfo or PGCONNECT_TIMEOUT says otherwise
_connections: Dict[str, Any] = {}


class Unreachable(BatonError):
    """The database cannot be used now; what was to be written can wait in the local queue.
    ``cause`` is the driver's own words (one line)."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"the job's database cannot be reached: {cause}", CHECK)
        self.cause = cause


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
    """This process's connection to ``conninfo`` (made on first use, made again when broken)."""
    conn = _connections.get(conninfo)
    if conn is not None and not conn.closed and not conn.broken:
        return conn
    module = psycopg()
    extra: Dict[str, Any] = {}
    if "connect_timeout" not in conninfo and not os.environ.get("PGCONNECT_TIMEOUT"):
        extra["connect_timeout"] = CONNECT_TIMEOUT
    try:
        conn = module.connect(conninfo, autocommit=True, application_name="baton", **extra)
    except module.Error as exc:
        raise (unreachable(exc) or Unreachable(" ".join(str(exc).split())[:300])) from None
    _connections[conninfo] = conn
    return conn


def forget(conninfo: str) -> None:
    """Drop this process's connection (after an error left it unusable)."""
    conn = _connections.pop(conninfo, None)
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection may fail any way it likes
            pass
