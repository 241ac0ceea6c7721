"""The plan's rules as the gate checks them: one module per rule kind, named after it, and one table.

:data:`RULES` maps each rule kind to the gates that ask its module (``store.gate.rules.<kind>``),
in the order they ask; the first refusal wins. A module defines ``bash(call, plan, command, scan,
step)`` for a Bash command and ``write(call, plan, raw)`` for Write, Edit and NotebookEdit, each
giving ``None`` or the refusal. :func:`checks_for` imports a module only when the plan has its kind,
so a plan without rules loads none of them. Adding a rule kind is one module here and one row.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterator, Optional, Set, Tuple

    from store.plan.plan import Plan

RULES: Dict[str, Tuple[str, ...]] = {
    "deny_bash": ("bash",),
    "effects": ("bash",),  # the plan's ``effects`` field: side effects kept to `baton once`
    "protect_branches": ("bash",),
    "deny_content": ("bash", "write"),
    "allow_hosts": ("bash",),  # WebFetch and MCP tools: store.gate.policy asks allow_hosts itself
}
ELSEWHERE = {"check_after_write": "store.monitor.checks"}  # a rule kind no gate checks: run after a write


def in_play(plan: Plan) -> Set[str]:
    """The kinds this plan has: its rules', ``effects`` when it lists any, and ``allow_hosts`` while
    ``limits.external_ops`` counts the operations that leave the machine, with or without such a rule."""
    kinds = {rule.kind for rule in plan.rules}
    if plan.effects:
        kinds.add("effects")
    if plan.limits.get("external_ops"):
        kinds.add("allow_hosts")
    return kinds


def checks_for(plan: Plan, gate: str) -> Iterator[Callable[..., Optional[str]]]:
    """The ``gate`` functions (``"bash"`` or ``"write"``) of the plan's rule kinds, in the table's order."""
    kinds = in_play(plan)
    for kind, gates in RULES.items():
        if kind in kinds and gate in gates:
            name = f"{__name__}.{kind}"
            __import__(name)  # not importlib, as hooks/adapter.py: importing it costs a hook more than the lookup
            yield getattr(sys.modules[name], gate)
