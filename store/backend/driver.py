"""psycopg 3, imported only when the PostgreSQL store is configured, and one connection per process.

Hooks run as ``python3 -S`` (no site-packages), so when psycopg is not importable as is, the
interpreter's own site directories (and a virtual environment's) are added to ``sys.path``,
without running their ``.pth`` files, and the import is tried again. When it still fails, one
line says how to install it for this interpreter. An error that means the server cannot be used
now (refused, gone, restarted, timed out) becomes :class:`Unreachable`.
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


def _site_dirs() -> List[str]:
    import site

    prefixes = [sys.prefix, sys.exec_prefix]
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):  # -S skips the venv set-up that site does
        prefixes.insert(0, venv)
    dirs = list(site.getsitepackages(prefixes))
    dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d) and d not in sys.path]


def psycopg() -> ModuleType:
    """The psycopg module, or a :class:`BatonError` saying how to install it."""
    try:
        import psycopg as module
    except ImportError:
        sys.path.extend(_site_dirs())
        try:
            import psycopg as module
        except ImportError:
            raise BatonError(
                f"the PostgreSQL store needs psycopg 3, which {sys.executable} cannot import; install it with "
                f"`{sys.executable} -m pip install 'psycopg[binary]'` (or unset BATON_DATABASE_URL and BATON_STORE)"
            ) from None
    return module


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
