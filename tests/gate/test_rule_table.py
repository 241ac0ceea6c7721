"""The table of rule kinds (``store.gate.rules.RULES``): every kind the plan accepts is checked by a
module named after it, the Bash and file gates ask exactly the modules the table names, in its order,
and a new kind needs one module and one row."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, List, Optional

import pytest

from store.gate import rules
from store.gate.bash import job_rules
from store.gate.call import Call
from store.plan.rules import KINDS
from store.shell import analyse

FOLDER = Path(rules.__file__).parent
PARAMETERS = {"bash": ["call", "plan", "command", "scan", "step"], "write": ["call", "plan", "raw"]}


def plan_with(*kinds: str, effects: tuple = (), limits: Optional[dict] = None) -> Any:
    return SimpleNamespace(rules=tuple(SimpleNamespace(kind=k) for k in kinds), effects=effects, limits=limits or {})


def test_every_kind_the_plan_accepts_has_a_row_or_is_checked_elsewhere() -> None:
    assert set(rules.RULES) | set(rules.ELSEWHERE) == set(KINDS) | {"effects"}
    assert not set(rules.RULES) & set(rules.ELSEWHERE)


def test_each_row_is_a_module_named_after_its_kind_defining_what_its_gates_call() -> None:
    assert {p.stem for p in FOLDER.glob("*.py")} - {"__init__"} == set(rules.RULES)
    for kind, gates in rules.RULES.items():
        module = __import__(f"store.gate.rules.{kind}", fromlist=["_"])
        assert gates and set(gates) <= set(PARAMETERS), kind
        for gate in gates:
            assert list(inspect.signature(getattr(module, gate)).parameters) == PARAMETERS[gate], (kind, gate)


def test_the_gates_ask_the_plans_kinds_in_the_tables_order() -> None:
    everything = plan_with("allow_hosts", "deny_content", "deny_bash", "protect_branches", effects=("deploy*",))
    assert [f.__module__.rsplit(".", 1)[1] for f in rules.checks_for(everything, "bash")] == list(rules.RULES)
    assert [f.__module__.rsplit(".", 1)[1] for f in rules.checks_for(everything, "write")] == ["deny_content"]
    assert list(rules.checks_for(plan_with(), "bash")) == []
    assert rules.in_play(plan_with(limits={"external_ops": 3})) == {"allow_hosts"}  # counted without a rule


def test_a_new_rule_kind_is_one_module_and_one_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: List[str] = []
    module = ModuleType("store.gate.rules.no_fridays")

    def bash(call: Call, plan: Any, command: str, scan: Any, step: str) -> Optional[str]:
        asked.append(f"bash {command} {step}")
        return "no deploys on a Friday [baton:rule]" if "deploy" in command else None

    def write(call: Call, plan: Any, raw: str) -> Optional[str]:
        asked.append(f"write {raw}")
        return None

    module.bash, module.write = bash, write  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(rules.RULES, "no_fridays", ("bash", "write"))
    plan = plan_with("no_fridays")
    call = Call("Bash", {"command": "x"}, str(tmp_path), str(tmp_path), str(tmp_path / ".baton"), str(tmp_path), {})
    assert job_rules(call, plan, "./deploy.sh", analyse("./deploy.sh", str(tmp_path), str(tmp_path)), "ship") == \
        "no deploys on a Friday [baton:rule]"
    assert job_rules(call, plan, "ls", analyse("ls", str(tmp_path), str(tmp_path)), "ship") is None
    assert [f(call, plan, "a.txt") for f in rules.checks_for(plan, "write")] == [None]
    assert asked == ["bash ./deploy.sh ship", "bash ls ship", "write a.txt"]
