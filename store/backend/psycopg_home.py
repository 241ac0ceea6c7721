"""Where psycopg may be installed for the ``python3`` that runs baton, and the install line that
works for it.

Hooks run as ``python3 -S``: no site directories at all, and never the active virtual
environment's, whichever ``python3`` Claude Code starts. So baton looks, in order, in the
interpreter's own virtual environment, the active one (``$VIRTUAL_ENV``), baton's own (see
:func:`own_venv`), the interpreter's site directories (a system package) and the user's site
directory (``pip install --user``); a virtual environment counts only when it was made by the same
Python version, since psycopg's compiled part is built for one. The install line it suggests is
one that works here: a virtual environment's own pip; where the interpreter is managed by the
system (PEP 668, as Debian's is, which refuses ``pip install`` outside a virtual environment),
baton's own environment, made with ``python3 -m venv`` and then found whatever environment is
active; else this interpreter's pip.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Tuple

PACKAGE = "'psycopg[binary]'"


def own_venv(env: Mapping[str, str]) -> str:
    """baton's own environment for its optional packages: ``$XDG_DATA_HOME/baton/venv``, by default
    ``~/.local/share/baton/venv`` (per user, outside every project, like a pipx environment)."""
    data = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "baton", "venv")


def venv_version(folder: str) -> Optional[Tuple[int, int]]:
    """(major, minor) of the Python that made the virtual environment ``folder``, from its
    ``pyvenv.cfg``; ``None`` when ``folder`` is not one."""
    try:
        with open(os.path.join(folder, "pyvenv.cfg"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        name, _, value = line.partition("=")
        if name.strip() in ("version", "version_info"):
            parts = value.strip().split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return int(parts[0]), int(parts[1])
    return (0, 0)  # a venv that does not say: it may still be ours; its folders tell


def interpreter_venv() -> str:
    """The virtual environment the running interpreter belongs to ('' for none): ``-S`` skips the
    set-up that would say so, so it is read from the executable's place."""
    folder = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    return folder if venv_version(folder) is not None else ""


def venvs(env: Mapping[str, str]) -> List[Tuple[str, str]]:
    """(why, folder) of each virtual environment to look in, the interpreter's first."""
    found = [("this python3's environment", interpreter_venv()),
             ("the active environment ($VIRTUAL_ENV)", env.get("VIRTUAL_ENV") or ""),
             ("baton's own environment", own_venv(env))]
    seen: List[str] = []
    out = []
    for why, folder in found:
        if folder and os.path.abspath(folder) not in seen and venv_version(folder) is not None:
            seen.append(os.path.abspath(folder))
            out.append((why, folder))
    return out


def venv_site(folder: str) -> List[str]:
    """A virtual environment's site-packages for this Python version. Not ``site.getsitepackages``:
    Debian's names a venv's folder only when the running interpreter is itself in a venv, which
    under ``-S`` it never seems to be."""
    if os.name == "nt":
        return [os.path.join(folder, "Lib", "site-packages")]
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    libdirs = ["lib", getattr(sys, "platlibdir", "lib")]
    return [os.path.join(folder, libdir, version, "site-packages") for libdir in dict.fromkeys(libdirs)]


def site_dirs(env: Mapping[str, str]) -> List[str]:
    """The folders to add to ``sys.path`` for psycopg, in order, that exist and are not there yet."""
    import site

    dirs: List[str] = []
    for _, folder in venvs(env):
        if venv_version(folder) in (sys.version_info[:2], (0, 0)):
            dirs += venv_site(folder)
    dirs += site.getsitepackages([sys.prefix, sys.exec_prefix])
    dirs.append(site.getusersitepackages())
    out: List[str] = []
    for folder in dirs:
        if os.path.isdir(folder) and folder not in sys.path and folder not in out:
            out.append(folder)
    return out


def mismatched(env: Mapping[str, str]) -> List[str]:
    """The environments looked at but made by another Python version, for the error to name."""
    out = []
    for why, folder in venvs(env):
        version = venv_version(folder)
        if version not in (sys.version_info[:2], (0, 0), None):
            assert version is not None
            out.append(f"{why} {folder} is Python {version[0]}.{version[1]}, this is "
                       f"{sys.version_info[0]}.{sys.version_info[1]}")
    return out


def managed() -> bool:
    """True when the interpreter is managed by the system (PEP 668's ``EXTERNALLY-MANAGED`` marker):
    its pip refuses to install outside a virtual environment."""
    import sysconfig

    if sys.prefix != sys.base_prefix or interpreter_venv():
        return False
    return os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))


def venv_python(folder: str) -> str:
    return os.path.join(folder, "Scripts", "python.exe") if os.name == "nt" else os.path.join(folder, "bin", "python")


def install_line(env: Mapping[str, str]) -> str:
    """The one command that installs psycopg where the next run finds it."""
    import shlex

    ours = interpreter_venv()
    active = env.get("VIRTUAL_ENV") or ""
    if ours:
        return f"{shlex.quote(venv_python(ours))} -m pip install {PACKAGE}"
    if active and venv_version(active) in (sys.version_info[:2], (0, 0)):
        return f"{shlex.quote(venv_python(active))} -m pip install {PACKAGE}"
    if managed():
        home = own_venv(env)
        stale = venv_version(home) not in (None, sys.version_info[:2], (0, 0))  # made by another Python: remake it
        return (f"{shlex.quote(sys.executable)} -m venv {'--clear ' if stale else ''}{shlex.quote(home)} && "
                f"{shlex.quote(venv_python(home))} -m pip install {PACKAGE}")
    return f"{shlex.quote(sys.executable)} -m pip install {PACKAGE}"
