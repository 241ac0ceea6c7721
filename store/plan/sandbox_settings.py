"""The plan's ``sandbox`` settings: how baton's kernel sandbox runs Bash for this job, validated.

Job level (every field optional): ``enabled``, ``require``, ``auto_allow``, ``git``, ``network``,
``caches``, ``extra_writes``, ``disable_userns``. A step may override ``git`` and ``network``.
Each mistake raises ``PlanError`` with one line naming the file, the step and the field.
"""

from __future__ import annotations

from store.base.errors import USAGE, BatonError
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple, Union

    Network = Union[str, Tuple[str, ...]]  # "host", "none", or the allowed host names

JOB_FIELDS = ("enabled", "require", "auto_allow", "git", "network", "caches", "extra_writes", "disable_userns")
STEP_FIELDS = ("git", "network")
GIT_MODES = ("rw", "ro")
NETWORK_MODES = ("host", "none")
CACHE_MODES = ("shared", "private")


class SandboxSettingsError(BatonError):
    """A field of the plan's ``sandbox`` object is invalid (shown as a plan error)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


class SandboxSettings(Frozen):
    """The job's settings (``None`` fields mean "the default"; see :func:`effective`)."""

    __slots__ = ("enabled", "require", "auto_allow", "git", "network", "caches", "extra_writes", "disable_userns")

    def __init__(self, enabled: bool = True, require: bool = False, auto_allow: bool = False,
                 git: Optional[str] = None, network: Optional[Network] = None, caches: str = "shared",
                 extra_writes: Tuple[str, ...] = (), disable_userns: bool = False) -> None:
        self.enabled, self.require, self.auto_allow = enabled, require, auto_allow
        self.git, self.network, self.caches = git, network, caches
        self.extra_writes, self.disable_userns = extra_writes, disable_userns

    def for_step(self, override: Optional[SandboxSettings]) -> SandboxSettings:
        """These settings with a step's ``git`` and ``network`` put over them."""
        if override is None:
            return self
        return SandboxSettings(self.enabled, self.require, self.auto_allow,
                               override.git if override.git is not None else self.git,
                               override.network if override.network is not None else self.network,
                               self.caches, self.extra_writes, self.disable_userns)

    @property
    def git_mode(self) -> str:
        return self.git or "rw"

    @property
    def network_mode(self) -> Network:
        return self.network if self.network is not None else "host"


DEFAULT = SandboxSettings()


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__)


def _flag(raw: Any, name: str, at: Callable[[str], str]) -> bool:
    if not isinstance(raw, bool):
        raise SandboxSettingsError(f"{at(name)}: expected true or false, got {_kind(raw)}")
    return raw


def _choice(raw: Any, name: str, at: Callable[[str], str], choices: Tuple[str, ...]) -> str:
    if raw not in choices:
        shown = repr(raw) if isinstance(raw, str) else _kind(raw)
        raise SandboxSettingsError(f"{at(name)}: expected {' or '.join(repr(c) for c in choices)}, got {shown}")
    return str(raw)


def _network(raw: Any, at: Callable[[str], str]) -> Network:
    if isinstance(raw, str):
        return _choice(raw, "network", at, NETWORK_MODES)
    if isinstance(raw, dict) and set(raw) == {"allow_hosts"}:
        from store.plan.hostnames import host_patterns  # only for a step with an allowlist

        return host_patterns(raw["allow_hosts"], at("network.allow_hosts"), SandboxSettingsError)
    raise SandboxSettingsError(f"{at('network')}: expected \"host\", \"none\" or {{\"allow_hosts\": [...]}}, "
                               f"got {_kind(raw)}")


def _globs(raw: Any, at: Callable[[str], str]) -> Tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(v, str) and v.strip() for v in raw):
        raise SandboxSettingsError(f"{at('extra_writes')}: expected a list of non-empty globs")
    return tuple(raw)


def parse(raw: Any, where: str, step: bool = False) -> SandboxSettings:
    """Validate a ``sandbox`` object; ``where`` names the file (and step) for error messages."""

    def at(name: str) -> str:
        return f"{where}: field 'sandbox.{name}'"

    if not isinstance(raw, dict):
        raise SandboxSettingsError(f"{where}: field 'sandbox': expected an object, got {_kind(raw)}")
    known = STEP_FIELDS if step else JOB_FIELDS
    for key in raw:
        if key not in known:
            raise SandboxSettingsError(f"{at(str(key))}: unknown field (known: {', '.join(known)})")
    values: Dict[str, Any] = {}
    for name in ("enabled", "require", "auto_allow", "disable_userns"):
        if name in raw:
            values[name] = _flag(raw[name], name, at)
    if "git" in raw:
        values["git"] = _choice(raw["git"], "git", at, GIT_MODES)
    if "network" in raw:
        values["network"] = _network(raw["network"], at)
    if "caches" in raw:
        values["caches"] = _choice(raw["caches"], "caches", at, CACHE_MODES)
    if "extra_writes" in raw:
        values["extra_writes"] = _globs(raw["extra_writes"], at)
    return SandboxSettings(**values)
