"""The one exception type a person may see: a message of one line and an exit code."""

from __future__ import annotations

USAGE = 2  # bad usage or bad input
CHECK = 1  # a check failed (verify, validate, a refused record)


class BatonError(Exception):
    """A mistake or failed check to report as one clear line, never as a traceback."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
