"""The plan: parsing and validating ``plan.json`` into immutable steps and job-level policy.

Two forms are accepted. The seed form ``{"steps": ["a", "b"]}`` gives ungated steps. The rich
form gives step objects (``id``, ``title``, ``phase``, ``tools``, ``writes``, ``bash``,
``approval``, ``validate``, ``skippable``, the checkpoint fields ``inputs``, ``artifacts``,
``rerun``, and ``needs``) and job fields (``job``, ``limits``, ``protect``, ``rules``, whose kinds
are validated in ``store.plan.rules``, ``effects``). Every mistake raises :class:`PlanError` with
one line naming the file, the step and the field.
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.base.errors import USAGE, BatonError, describe
from store.base.values import Frozen
from store.plan import sandbox_settings
from store.plan.rules import Rule, RuleError, parse_rules
from store.plan.sandbox_settings import SandboxSettings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple, Union

PHASES = ("discovered", "planned", "approved", "implemented", "validated", "published")
APPROVAL_PHASES = ("approved", "published")
STEP_FIELDS = ("id", "title", "phase", "tools", "writes", "bash", "approval", "validate", "skippable", "inputs",
               "artifacts", "rerun", "needs", "sandbox")
JOB_FIELDS = ("$schema", "job", "steps", "limits", "protect", "rules", "effects", "sandbox")
RERUN = ("skip", "redo", "never")  # what a resumed job does with a done step (docs/once-and-checkpoints.md)
MAX_ID = 200
MAX_PLAN_BYTES = 4 * 1024 * 1024  # a plan of 10,000 rich steps is about 2 MB; more is not a plan
# limit name -> (type, meaning); documented in docs/plan-and-state.md's table of plan fields
LIMITS: Dict[str, str] = {
    "tool_calls": "tool calls in the whole job",
    "wall_minutes": "minutes since the first ledger record",
    "tokens": "tokens reported by sessions",
    "cost_usd": "dollars reported by sessions",
    "changed_files": "distinct files changed by one step",
    "turns": "Stop-hook turns in the whole job",
    "stop_blocks": "times the Stop hook may send one session back",
    "calls_without_record": "tool calls since the last record before a reminder",
    "repeated_failures": "identical failures in a row before an alert",
    "validate_seconds": "timeout of a step's validate command",
    "no_progress_minutes": "minutes without a step or approval record before an alert",
    "external_ops": "operations that leave the machine in the whole job (`baton once` results and outgoing calls)",
    "lease_minutes": "minutes without a worker's activity before its claimed step may be claimed again",
}
FLOAT_LIMITS = ("cost_usd", "wall_minutes", "no_progress_minutes", "lease_minutes")


class PlanError(BatonError):
    """The plan file is unreadable or invalid."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


class Step(Frozen):
    """One step. ``None`` for tools/writes/bash means "not restricted by this field"; ``None`` for
    ``needs`` means "needs the step before it" (see :meth:`Plan.needs_of`)."""

    __slots__ = ("id", "title", "phase", "tools", "writes", "bash", "approval", "validate", "skippable", "inputs",
                 "artifacts", "rerun", "needs", "sandbox")
    id: str
    title: str
    phase: Optional[str]
    tools: Optional[Tuple[str, ...]]
    writes: Optional[Tuple[str, ...]]
    bash: Optional[Tuple[str, ...]]
    approval: Optional[bool]
    validate: Optional[str]
    skippable: bool
    inputs: Tuple[str, ...]
    artifacts: Tuple[str, ...]
    rerun: str
    needs: Optional[Tuple[str, ...]]
    sandbox: Optional[SandboxSettings]

    def __init__(self, id: str, title: str = "", phase: Optional[str] = None,
                 tools: Optional[Tuple[str, ...]] = None, writes: Optional[Tuple[str, ...]] = None,
                 bash: Optional[Tuple[str, ...]] = None, approval: Optional[bool] = None,
                 validate: Optional[str] = None, skippable: bool = False, inputs: Tuple[str, ...] = (),
                 artifacts: Tuple[str, ...] = (), rerun: str = "skip", needs: Optional[Tuple[str, ...]] = None,
                 sandbox: Optional[SandboxSettings] = None) -> None:
        # skippable: the plan consents to `skipped` although the step has validate or approval;
        # inputs and artifacts are globs, rerun one of RERUN; sandbox: the step's own git/network settings
        self._init(id, title, phase, tools, writes, bash, approval, validate, skippable, inputs, artifacts, rerun,
                   needs, sandbox)

    @property
    def needs_approval(self) -> bool:
        """Explicit ``approval`` wins; otherwise the approved and published phases need one."""
        return self.approval if self.approval is not None else self.phase in APPROVAL_PHASES


class Plan(Frozen):
    __slots__ = ("steps", "job", "limits", "protect", "rules", "source", "effects", "sandbox")

    def __init__(self, steps: Tuple[Step, ...], job: str = "", limits: Optional[Mapping[str, float]] = None,
                 protect: Tuple[str, ...] = (), rules: Tuple[Rule, ...] = (), source: str = "plan.json",
                 effects: Tuple[str, ...] = (), sandbox: SandboxSettings = sandbox_settings.DEFAULT) -> None:
        self.steps, self.job, self.limits = steps, job, dict(limits or {})
        self.protect, self.rules, self.source = protect, rules, source
        self.effects = effects  # command patterns that may run only through `baton once`
        self.sandbox = sandbox

    @property
    def ids(self) -> Tuple[str, ...]:
        return tuple(s.id for s in self.steps)

    def step(self, step_id: str) -> Optional[Step]:
        for step in self.steps:
            if step.id == step_id:
                return step
        return None

    @property
    def parallel(self) -> bool:
        """True when any step says what it ``needs``: steps then run in parallel, by claims.
        Without ``needs`` anywhere the plan is the sequence it always was."""
        return any(step.needs is not None for step in self.steps)

    def needs_of(self, index: int) -> Tuple[str, ...]:
        """The ids step ``index`` waits for: its ``needs``, else the step before it."""
        step = self.steps[index]
        if step.needs is not None:
            return step.needs
        return (self.steps[index - 1].id,) if index > 0 else ()


def _where(source: str, index: Optional[int], step_id: Optional[str], name: str) -> str:
    at = source
    if index is not None:
        at += f": step {index + 1}" + (f" ({step_id!r})" if step_id else "")
    return f"{at}: field {name!r}"


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _strings(value: Any, where: Union[str, Callable[[], str]], allow_empty: bool = True) -> Tuple[str, ...]:
    """``value`` as a tuple of non-blank strings; ``where`` (or what it returns, built only for an
    error) names the field."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value) \
            or not allow_empty and not value:
        at = where if isinstance(where, str) else where()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PlanError(f"{at}: expected a list of strings, got {_kind(value)}")
        if not value:
            raise PlanError(f"{at}: expected at least one entry")
        raise PlanError(f"{at}: entries must not be empty")
    return tuple(value)


def check_id(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise PlanError(f"{where}: expected a string, got {_kind(value)}")
    if not value.strip() or value != value.strip():
        raise PlanError(f"{where}: must be non-empty without leading or trailing spaces")
    if len(value) > MAX_ID:
        raise PlanError(f"{where}: longer than {MAX_ID} characters")
    # printable text has none (the hooks parse every id on every call: the test per character is the slow part)
    if not value.isprintable():
        if any(ord(c) < 32 or ord(c) == 127 or c in "\u2028\u2029\x85" for c in value):
            raise PlanError(f"{where}: contains a control character")
        if any("\ud800" <= c <= "\udfff" for c in value):  # no UTF-8 can hold it: the ledger could not either
            raise PlanError(f"{where}: contains a lone surrogate (\\ud800-\\udfff), which is not text")
    return value


def _only_known(raw: Dict[str, Any], known: Tuple[str, ...], at: Callable[[str], str],
                shown: Optional[Tuple[str, ...]] = None) -> None:
    """Refuse the first key of ``raw`` that is not in ``known``, naming the fields it could be."""
    for key in raw:
        if key not in known:
            raise PlanError(f"{at(key)}: unknown field (known: {', '.join(shown or known)})")


def _step(raw: Any, index: int, source: str) -> Step:
    if isinstance(raw, str):
        return Step(id=check_id(raw, _where(source, index, None, "id")))
    if not isinstance(raw, dict):
        raise PlanError(f"{source}: step {index + 1}: expected a string or an object, got {_kind(raw)}")
    sid = raw.get("id")
    if "id" not in raw:
        raise PlanError(f"{_where(source, index, None, 'id')}: missing")
    sid = check_id(sid, _where(source, index, None, "id"))

    def at(name: str) -> str:
        return _where(source, index, sid, name)

    _only_known(raw, STEP_FIELDS, at)
    title = raw.get("title", "")
    if not isinstance(title, str):
        raise PlanError(f"{at('title')}: expected a string, got {_kind(title)}")
    phase = raw.get("phase")
    if phase is not None and phase not in PHASES:
        raise PlanError(f"{at('phase')}: {phase!r} is not one of {', '.join(PHASES)}")
    approval = raw.get("approval")
    if approval is not None and not isinstance(approval, bool):
        raise PlanError(f"{at('approval')}: expected true or false, got {_kind(approval)}")
    validate = raw.get("validate")
    if validate is not None and (not isinstance(validate, str) or not validate.strip()):
        raise PlanError(f"{at('validate')}: expected a non-empty command string")
    skippable = raw.get("skippable", False)
    if not isinstance(skippable, bool):
        raise PlanError(f"{at('skippable')}: expected true or false, got {_kind(skippable)}")
    lists = {k: _strings(raw[k], lambda k=k: at(k)) if k in raw else None  # type: ignore[misc]
             for k in ("tools", "writes", "bash", "needs")}
    needs = lists["needs"]
    if needs is not None and len(set(needs)) != len(needs):
        raise PlanError(f"{at('needs')}: names a step twice")
    inputs, artifacts = (_strings(raw[k], lambda k=k: at(k)) if k in raw else ()  # type: ignore[misc]
                         for k in ("inputs", "artifacts"))
    rerun = raw.get("rerun", "skip")
    if rerun not in RERUN:
        raise PlanError(f"{at('rerun')}: {rerun!r} is not one of {', '.join(RERUN)}")
    sandbox = _sandbox(raw["sandbox"], f"{source}: step {index + 1} ({sid!r})", True) if "sandbox" in raw else None
    return Step(sid, title, phase, lists["tools"], lists["writes"], lists["bash"], approval, validate, skippable,
                inputs, artifacts, rerun, needs, sandbox)


def _check_needs(plan: Plan, source: str) -> None:
    """Every id in ``needs`` names a step of the plan, and no step waits, through others, for itself."""
    index = {sid: i for i, sid in enumerate(plan.ids)}
    for i, step in enumerate(plan.steps):
        for name in step.needs or ():
            if name not in index:
                raise PlanError(f"{_where(source, i, step.id, 'needs')}: {name!r} is not a step of this plan")
    colour = [0] * len(plan.steps)  # 0 not seen, 1 on the current path, 2 finished
    for start in range(len(plan.steps)):
        if colour[start]:
            continue
        colour[start], stack = 1, [(start, 0)]
        while stack:
            node, k = stack[-1]
            deps = plan.needs_of(node)
            if k == len(deps):
                colour[node] = 2
                stack.pop()
                continue
            stack[-1] = (node, k + 1)
            dep = index[deps[k]]
            if colour[dep] == 1:
                path = [n for n, _ in stack]
                loop = path[path.index(dep):]
                names = " -> ".join(repr(plan.steps[n].id) for n in loop + [dep])
                at = next(n for n in loop if plan.steps[n].needs is not None)  # implicit needs only point back
                raise PlanError(f"{_where(source, at, plan.steps[at].id, 'needs')}: a cycle: {names} "
                                "(a step without `needs` needs the step before it)")
            if colour[dep] == 0:
                colour[dep] = 1
                stack.append((dep, 0))


def _sandbox(raw: Any, where: str, step: bool) -> SandboxSettings:
    try:
        return sandbox_settings.parse(raw, where, step)
    except sandbox_settings.SandboxSettingsError as exc:
        raise PlanError(exc.message) from None


def _limits(raw: Any, source: str) -> Dict[str, float]:
    if not isinstance(raw, dict):
        raise PlanError(f"{source}: field 'limits': expected an object, got {_kind(raw)}")
    out: Dict[str, float] = {}
    for key, value in raw.items():
        where = f"{source}: field 'limits.{key}'"
        if key not in LIMITS:
            raise PlanError(f"{where}: unknown limit (known: {', '.join(LIMITS)})")
        number_ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number_ok and isinstance(value, float):
            from math import isfinite  # on first use: most limits are whole numbers

            number_ok = isfinite(value)  # json accepts NaN and Infinity; neither is a limit
        if not number_ok or value <= 0 or (key not in FLOAT_LIMITS and not isinstance(value, int)):
            kind = "a positive number" if key in FLOAT_LIMITS else "a positive whole number"
            raise PlanError(f"{where}: expected {kind}, got {value!r}")
        out[key] = value
    return out


def _rules(raw: Any, source: str) -> Tuple[Rule, ...]:
    try:
        return parse_rules(raw, source)
    except RuleError as exc:
        raise PlanError(str(exc)) from None


def parse_plan(data: Any, source: str = "plan.json") -> Plan:
    """Validate decoded JSON and build a :class:`Plan`; raise :class:`PlanError` on any mistake."""
    if not isinstance(data, dict):
        raise PlanError(f"{source}: expected a JSON object with a 'steps' list, got {_kind(data)}")
    _only_known(data, JOB_FIELDS, lambda key: f"{source}: field {key!r}", shown=JOB_FIELDS[1:])
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise PlanError(f"{source}: field 'steps': expected a non-empty list, got {_kind(raw_steps)}")
    steps = tuple(_step(raw, i, source) for i, raw in enumerate(raw_steps))
    seen: Dict[str, int] = {}
    for i, step in enumerate(steps):
        if step.id in seen:
            raise PlanError(f"{source}: step {i + 1} ({step.id!r}): field 'id': duplicate of step {seen[step.id] + 1}")
        seen[step.id] = i
    job = data.get("job", "")
    if not isinstance(job, str):
        raise PlanError(f"{source}: field 'job': expected a string, got {_kind(job)}")
    protect = _strings(data["protect"], f"{source}: field 'protect'") if "protect" in data else ()
    limits = _limits(data["limits"], source) if "limits" in data else {}
    rules = _rules(data["rules"], source) if "rules" in data else ()
    effects = _strings(data["effects"], f"{source}: field 'effects'") if "effects" in data else ()
    sandbox = _sandbox(data["sandbox"], source, False) if "sandbox" in data else sandbox_settings.DEFAULT
    plan = Plan(steps, job, limits, protect, rules, source, effects, sandbox)
    if plan.parallel:
        _check_needs(plan, source)
    return plan


def load_plan(path: Union[str, Path]) -> Plan:
    """Read and validate ``path``. A missing file, bad JSON or a bad field raises :class:`PlanError`."""
    from store.base.bounded import Unreadable, read_regular

    try:
        text = read_regular(str(path), MAX_PLAN_BYTES).decode("utf-8")
    except FileNotFoundError:
        if os.path.islink(path):
            raise PlanError(f"{path}: cannot read the plan: it is a link to {os.readlink(path)!r}, "
                            "which does not exist") from None
        raise PlanError(f"{path}: no job here; start one with `baton init STEP...` (the steps in order, e.g. "
                        "`baton init fetch build test`) or `baton init --plan FILE`") from None
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the plan: {describe(exc)}") from None
    except (Unreadable, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot read the plan: it {exc}" if isinstance(exc, Unreadable)
                        else f"{path}: cannot read the plan: {exc}") from None
    return parse_text(text, str(path))


class DuplicateKey(ValueError):
    """A JSON object names the same key twice (``json`` would keep the last one silently)."""


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    data = dict(pairs)
    if len(data) == len(pairs):
        return data
    seen: Set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    owner = data.get("id")
    where = f" in the object with id {owner!r}" if isinstance(owner, str) else ""
    raise DuplicateKey(f"duplicate key {key!r}{where} (a key may appear once in an object)")


def parse_text(text: str, source: str) -> Plan:
    try:
        data = jsonc.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKey as exc:
        raise PlanError(f"{source}: {exc}") from None
    except jsonc.JSONDecodeError as exc:
        raise PlanError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer too long to convert, nesting too deep
        raise PlanError(f"{source}: invalid JSON: {exc}") from None
    return parse_plan(data, source)
