"""Time as baton's figures use it: UTC ISO timestamps (ledger seconds, transcript milliseconds)
read to and written from seconds since the epoch, without importing ``datetime`` on a hook's path."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def epoch(ts: object) -> Optional[float]:
    """``YYYY-MM-DDTHH:MM:SS[.fff][Z]`` (UTC) as seconds since 1970; ``None`` when unreadable."""
    if not isinstance(ts, str) or len(ts) < 19 or ts[4] != "-" or ts[10] not in "T ":
        return None
    try:
        y, mo, d = int(ts[0:4]), int(ts[5:7]), int(ts[8:10])
        h, mi, s = int(ts[11:13]), int(ts[14:16]), int(ts[17:19])
        frac = float("0" + ts[19:].rstrip("Z")) if len(ts) > 20 and ts[19] == "." else 0.0
    except ValueError:
        return None
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        return None
    # days since 1970-01-01 for a proleptic Gregorian date (the inverse of time.gmtime)
    yy, mm = (y - 1, mo + 12) if mo <= 2 else (y, mo)
    days = 365 * yy + yy // 4 - yy // 100 + yy // 400 + (153 * (mm - 3) + 2) // 5 + d - 719469
    return float(days * 86400 + h * 3600 + mi * 60 + s) + frac


def iso(seconds: float) -> str:
    """Seconds since 1970 as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), the ledger's form."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def span(seconds: Optional[float]) -> str:
    """A duration for people: ``45s``, ``12m``, ``3h05m``, ``2d04h``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    whole = int(max(seconds, 0))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"
