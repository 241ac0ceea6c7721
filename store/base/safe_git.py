"""baton's own git: run in folders the model writes, so it must run nothing the project holds.

``baton record`` (checkpoints) and ``baton merge --register`` run git outside the sandbox, in the
project. Git runs code named by its configuration (``core.fsmonitor``, hooks, ``core.sshCommand``,
diff drivers and textconv, clean/smudge filters, pagers, credential helpers) and by environment
variables (``GIT_EXTERNAL_DIFF``, ``GIT_SSH``, ``GIT_CONFIG_*``...). A file the model can write can
reach that configuration: a nested repository's ``.git/config``, a config file the repository
includes, a ``.gitattributes`` naming a filter. So baton's git:

- gets an environment without any ``GIT_*`` variable, without the user's and the system's config
  files (their includes could name a project file), and with optional locks off;
- gets, on its command line (which wins over every file), each of those code-running keys set to
  nothing or off, including every filter and diff driver the configuration names;
- never looks into submodules (which would start git again with their own configuration).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional

OFF = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.sshCommand=false", "core.pager=cat",
       "core.askPass=", "core.editor=false", "core.untrackedCache=false", "core.alternateRefsCommand=",
       "credential.helper=", "diff.external=", "diff.ignoreSubmodules=all", "status.submoduleSummary=false",
       "submodule.recurse=false", "protocol.allow=never", "gpg.program=false", "sequence.editor=false",
       "uploadpack.packObjectsHook=", "pager.status=false", "pager.diff=false")
DRIVER_KEYS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command"), "merge": ("driver",)}
TIMEOUT = 30
_DRIVERS: Dict[str, List[str]] = {}


def environment(base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """``base`` (this process's environment) without git's variables, and without config files
    outside the repository."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0",
               LC_ALL="C")
    return env


def _drivers(project: str, keep: str) -> List[str]:
    """``-c`` pairs that switch off every filter and diff driver the repository's configuration names
    (``keep``: a merge driver of baton's own, which ``merge --register`` writes and reads back)."""
    found = _DRIVERS.get(project)
    if found is None:
        import subprocess

        try:
            proc = subprocess.run(["git", "config", "--name-only", "--get-regexp", r"^(filter|diff|merge)\."],
                                  cwd=project, env=environment(), stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=TIMEOUT)
            names = proc.stdout.decode("utf-8", "replace").split()
        except (OSError, subprocess.SubprocessError):
            names = []
        found = []
        for name in names:
            kind, _, rest = name.partition(".")
            driver, _, key = rest.rpartition(".")
            if driver and key.lower() in DRIVER_KEYS.get(kind, ()) and f"{kind}.{driver}" != keep:
                found += ["-c", f"{kind}.{driver}.{key}="]
        _DRIVERS[project] = found
    return found


def argv(project: str, args: List[str], keep: str = "") -> List[str]:
    """``git`` with ``args``, made safe for ``project`` (see the module docstring)."""
    off = [a for pair in OFF for a in ("-c", pair)]
    return ["git", "--no-pager", *off, *_drivers(project, keep), *args]
