"""The one exception type a person may see (a message of one line and an exit code), and how an
error of the environment (disk full, permission denied, a folder where a file should be) is named."""

from __future__ import annotations

USAGE = 2  # bad usage or bad input
CHECK = 1  # a check failed (verify, validate, a refused record)


class BatonError(Exception):
    """A mistake or failed check to report as one clear line, never as a traceback."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# What an OSError means to a person, by errno name (looked up lazily: hooks rarely fail).
CAUSES = {
    "ENOSPC": "disk full", "EDQUOT": "disk quota exceeded", "EROFS": "read-only file system",
    "EACCES": "permission denied", "EPERM": "operation not permitted", "ENOENT": "no such file or folder",
    "ENOTDIR": "a file where a folder was expected", "EISDIR": "a folder where a file was expected",
    "ELOOP": "too many levels of symbolic links", "ENAMETOOLONG": "file name too long",
    "EMFILE": "too many open files", "ENFILE": "too many open files in the system", "EIO": "input/output error",
    "EEXIST": "already exists", "ETXTBSY": "file busy", "ENODEV": "no such device", "ENXIO": "no such device",
}
# Errors that say the disk or the folder cannot take a write right now.
UNWRITABLE = ("ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM")


def errno_name(exc: BaseException) -> str:
    import errno

    number = getattr(exc, "errno", None)
    return errno.errorcode.get(number, "") if isinstance(number, int) else ""


def describe(exc: OSError, path_hint: object = "") -> str:
    """``cause: path`` for an error of the environment, e.g. ``disk full: /p/.baton/steps.jsonl``;
    ``path_hint`` names the file when the error carries none (a failed read of an open file)."""
    cause = CAUSES.get(errno_name(exc)) or (exc.strerror or type(exc).__name__).lower()
    # a rename names its target second: that is the path in the way (a folder where a file goes)
    path = exc.filename2 if exc.filename2 is not None else exc.filename if exc.filename is not None else path_hint
    return f"{cause}: {path}" if path else cause


def unwritable(exc: BaseException) -> bool:
    """True when ``exc`` says baton cannot write (full disk, read-only, no permission)."""
    return isinstance(exc, OSError) and errno_name(exc) in UNWRITABLE
