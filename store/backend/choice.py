"""Which store the environment selects: the file store unless ``BATON_DATABASE_URL`` is set or
``BATON_STORE=postgresql`` (then libpq's ``PG*`` variables say where). Never a committed file.
"""

from __future__ import annotations

from store.base.errors import BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional

KINDS = ("file", "postgresql")


class Database(Frozen):
    """A PostgreSQL database: ``conninfo`` is a URL or ``key=value`` string, or empty for libpq's
    ``PG*`` variables; ``job`` names the job in it when ``BATON_JOB`` is set (else the plan's ``job``)."""

    __slots__ = ("conninfo", "job")

    def __init__(self, conninfo: str, job: str = "") -> None:
        self.conninfo, self.job = conninfo, job


def selected(env: Mapping[str, str]) -> Optional[Database]:
    """The database the environment names, or ``None`` for the file store in ``.baton/``."""
    kind = (env.get("BATON_STORE") or "").strip().lower()
    url = env.get("BATON_DATABASE_URL") or ""
    if kind == "postgres":
        kind = "postgresql"
    if kind and kind not in KINDS:
        raise BatonError(f"BATON_STORE={kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "file" or (not kind and not url):
        return None
    return Database(url, (env.get("BATON_JOB") or "").strip())


def shown(database: Database) -> str:
    """Where the database is, for messages, without a password."""
    text = database.conninfo or "the PG* variables"
    if "://" in text and "@" in text.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = text.split("://", 1)
        creds, host = rest.split("@", 1)
        text = f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    elif "password" in text:
        text = " ".join(w for w in text.split() if not w.startswith("password="))
    return text
