"""baton's own code and state outside the project: what runs or steers every later hook.

The plugin's folder (its modules, ``hooks/hooks.json``, the module cache ``hooks/codecache.py``
keeps in ``hooks/__pycache__``) is what Claude Code runs for every hook, outside any sandbox; the
sandbox probe's cache (``$XDG_STATE_HOME/baton``) decides whether Bash is sandboxed at all. Like
``.baton/`` they are baton's own state: no tool writes them, at any time (the gate refuses with
``own-files``), and baton's sandbox binds them read-only whatever the step may write. The
interpreter's own ``PYTHONPYCACHEPREFIX`` is switched off by the hooks' bootstrap, so no module of
baton's is read from a cache elsewhere.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping

PLUGIN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def state_dir(env: Mapping[str, str]) -> str:
    """``$XDG_STATE_HOME/baton`` (``~/.local/state/baton``): the sandbox probe's cache."""
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "baton")


def own_paths(env: Mapping[str, str]) -> List[str]:
    """The folders (resolved) that hold baton's code and state outside the project: this plugin's
    folder, the one Claude Code names (``CLAUDE_PLUGIN_ROOT``, when another copy) and the probe's."""
    found = [PLUGIN]
    named = env.get("CLAUDE_PLUGIN_ROOT")
    if named and os.path.isabs(named):
        found.append(os.path.realpath(named))
    found.append(os.path.realpath(state_dir(env)))
    return list(dict.fromkeys(found))
