"""Read, Grep and Glob: none may read baton's approval key (or the telemetry settings beside it,
which hold the collector's credentials) or search its folder, whatever the step.

Read names one file; Grep and Glob search a folder (their ``path``, else the session's current
folder) and everything below it, following a path given to them through symlinks (ripgrep follows
a link named on its command line, not the links it meets while searching; seen in 2.1.328). So a
Read of a file in the key's folder, a Glob inside that folder, and a Grep whose folder is inside it
or holds it (``~/.config``, ``~``, ``/``: Grep prints what it finds) are refused; a Glob of ``~``
lists the key's name at most, which is no secret. Paths are compared as written and resolved,
folded as ``store.base.paths`` does. A WebFetch of a ``file:`` URL is judged as a Grep of its
path (Claude Code 2.1.328 fetches only http and https; this holds if a later one does not).
Reading anything else, ``.baton/`` included, is not baton's concern.
"""

from __future__ import annotations

import os

from store.base import paths
from store.gate.call import refuse
from store.gate.toolset import READERS

TELEMETRY_SETTINGS = "telemetry.env"  # store.monitor.export_settings.FILE_NAME, beside the approval key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from store.gate.call import Call


def decide_read(call: Call) -> Optional[str]:
    """The refusal for a Read, Grep or Glob that would reach the approval key, else ``None``."""
    raw = call.input.get(READERS[call.tool])
    if call.tool == "Read":
        if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
            return refuse("payload", "baton denied this Read: it has no file_path, so it cannot be checked.")
        if _touches(call, raw, search=False):
            if os.path.basename(paths.resolve(raw, call.cwd, call.home)) == TELEMETRY_SETTINGS:
                return refuse("key", "baton denied reading baton's telemetry settings: they hold the collector's "
                                     "credentials, which only baton's export reads.")
            return refuse("key", "baton denied reading baton's approval key: only a person approves steps, with "
                                 "/baton:approve.")
        return None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raw = call.cwd  # Claude Code searches the session's folder
    if not isinstance(raw, str) or "\x00" in raw:
        return refuse("payload", f"baton denied this {call.tool}: its path is not a string, so it cannot be checked.")
    if _touches(call, raw, search=call.tool == "Grep"):
        return refuse("key", f"baton denied this {call.tool}: it would search {raw}, which is or holds the folder of "
                             f"baton's approval key ({call.key_dirs[0]}), and only a person approves steps. Search a "
                             "folder that does not hold it, such as the project.")
    return None


def _touches(call: Call, raw: str, search: bool) -> bool:
    """``raw`` is inside the key's folder, or (``search``) holds it."""
    typed = call.home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
    written = os.path.normpath(os.path.join(call.cwd, typed))
    for target in (written, paths.resolve(raw, call.cwd, call.home)):
        for folder in call.key_dirs:
            if paths.under(target, folder) or (search and paths.under(folder, target)):
                return True
    return False


def decide_file_url(call: Call, url: str) -> Optional[str]:
    """The refusal for a WebFetch of a ``file:`` URL that would reach the approval key, else ``None``."""
    if not url.strip().lower().startswith("file:"):
        return None
    from urllib.parse import unquote, urlsplit  # only here: every gate call would pay for urllib, re and ipaddress

    path = unquote(urlsplit(url.strip()).path) or "/"
    if "\x00" in path or _touches(call, path, search=True):
        return refuse("key", f"baton denied this WebFetch: {url[:80]} is or holds the folder of baton's approval key, "
                             "and only a person approves steps.")
    return None
