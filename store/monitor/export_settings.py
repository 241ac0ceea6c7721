"""Which OpenTelemetry settings (the standard ``OTEL_*`` variables) baton's export uses, and from where.

Claude Code strips ``OTEL_*`` from its hooks' environments, so the variables a person exported
before starting it are looked for where they can still be read. Every ``OTEL_*`` variable comes
from one place: the first of these that sets any of them.

1. baton's telemetry file, ``$XDG_CONFIG_HOME/baton/telemetry.env`` (``~/.config/baton``): lines
   ``NAME=value`` naming ``OTEL_*`` variables only. It sits beside the approval key, in the folder
   baton's gate keeps from every tool and its sandbox hides, so its headers stay out of the model's
   reach. A file that cannot be read or parsed, or that others may write, is an error, never a
   reason to send elsewhere.
2. this process's own environment: ``baton export`` in a terminal, ``baton run``, a host that
   passes ``OTEL_*`` on to hooks, or the detached sender a hook started with what it found
   (``BATON_OTEL_FROM`` then names the place, and nothing further is looked at).
3. Claude Code's environment (:mod:`store.monitor.claude_env`): what it was started with (Linux),
   overridden by the ``env`` of its settings, as Claude Code itself merges them.

Places are never mixed, so headers meant for one collector never go with another's endpoint. When
none sets anything the specification's defaults apply (``http://localhost:4318``). Whether the
export runs at all is ``BATON_TELEMETRY=1`` in the environment, which reaches hooks; the chosen
place's ``OTEL_SDK_DISABLED=true`` turns it off.
"""

from __future__ import annotations

import os

from store.base.errors import BatonError
from store.base.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Mapping, Optional

FILE_NAME = "telemetry.env"
CARRIED = "BATON_OTEL_FROM"  # set by a hook for the sender it starts: where its OTEL_* came from
PREFIX = "OTEL_"
NOTHING = "nothing set: the OpenTelemetry defaults"
MAX_FILE = 64 * 1024


class Settings(Value):
    """The ``OTEL_*`` values the export uses and where they were found (for people: never the values)."""

    __slots__ = ("values", "source")

    def __init__(self, values: Mapping[str, str], source: str) -> None:
        self.values, self.source = dict(values), source


def otel(name: str) -> bool:
    return name.startswith(PREFIX)


def file_path(env: Mapping[str, str]) -> str:
    from store.state.approvals import key_dir

    return os.path.join(key_dir(env), FILE_NAME)


def parse(text: str, path: str) -> Dict[str, str]:
    """``NAME=value`` lines (``export`` before the name and quotes around the value allowed, ``#``
    comments and blank lines skipped) into a dict; a line that is not one is a :class:`BatonError`."""
    out: Dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        where = f"{path} line {number}"
        if not sep or not name.replace("_", "A").isalnum() or not name.isascii() or name[0].isdigit():
            raise BatonError(f"{where}: expected NAME=value, e.g. OTEL_EXPORTER_OTLP_ENDPOINT=https://host:4318")
        if not otel(name) or name != name.upper():
            raise BatonError(f"{where}: {name} is not an OpenTelemetry variable; this file holds OTEL_* settings "
                             "only (turn the export on with BATON_TELEMETRY=1 in the environment)")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[name] = value
    return out


def read_file(path: str) -> Optional[Dict[str, str]]:
    """The file's settings; ``None`` when there is no file; :class:`BatonError` when it cannot be used."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            data = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        from store.base.errors import describe

        raise BatonError(f"baton's telemetry settings cannot be read: {describe(exc, path)}") from None
    if os.name != "nt" and info.st_mode & 0o022:
        raise BatonError(f"{path} may be written by others, who could send its headers anywhere; "
                         f"make it yours alone: chmod 600 {path}")
    if len(data) > MAX_FILE:
        raise BatonError(f"{path} is larger than {MAX_FILE // 1024} KB; it holds a few OTEL_* lines")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BatonError(f"{path} is not UTF-8 text") from None
    return parse(text, path)


def own(env: Mapping[str, str]) -> Dict[str, str]:
    return {k: v for k, v in env.items() if otel(k)}


def find(env: Mapping[str, str], project: str) -> Settings:
    """The settings the export uses, from the first place that sets any (see the module docstring)."""
    path = file_path(env)
    from_file = read_file(path)
    if from_file is not None:
        return Settings(from_file, path)
    mine = own(env)
    if env.get(CARRIED):
        return Settings(mine, env[CARRIED])
    if mine:
        return Settings(mine, "this process's environment")
    from store.monitor import claude_env

    values, where = claude_env.environment(env, env.get("CLAUDE_PROJECT_DIR") or project, otel)
    if values:
        return Settings(values, "Claude Code's environment: " + ", overridden by ".join(where))
    return Settings({}, NOTHING)


def carry(env: Mapping[str, str], settings: Settings) -> Dict[str, str]:
    """``env`` for a sender started by a hook: its own ``OTEL_*`` replaced by ``settings``, and where
    they came from in :data:`CARRIED`."""
    out = {k: v for k, v in env.items() if not otel(k)}
    out.update(settings.values)
    out[CARRIED] = settings.source
    return out
