"""The plan fields for side effects and checkpoints: ``inputs``, ``artifacts`` and ``rerun`` on a
step, ``effects`` and ``limits.external_ops`` on the job, each refused with the usual one line."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from store.plan.plan import PlanError, parse_plan


def test_the_fields_are_read_with_their_defaults() -> None:
    plan = parse_plan({"effects": ["gh pr create*"], "limits": {"external_ops": 3}, "steps": [
        {"id": "build", "inputs": ["src/**"], "artifacts": ["dist/app.tgz"], "rerun": "redo"}, "ship"]})
    build, ship = plan.steps
    assert (build.inputs, build.artifacts, build.rerun) == (("src/**",), ("dist/app.tgz",), "redo")
    assert (ship.inputs, ship.artifacts, ship.rerun) == ((), (), "skip")
    assert plan.effects == ("gh pr create*",) and plan.limits["external_ops"] == 3
    assert parse_plan({"steps": ["a"]}).effects == ()


@pytest.mark.parametrize("data, words", [
    ({"steps": [{"id": "a", "rerun": "twice"}]}, "field 'rerun': 'twice' is not one of skip, redo, never"),
    ({"steps": [{"id": "a", "inputs": "src/**"}]}, "field 'inputs': expected a list of strings, got string"),
    ({"steps": [{"id": "a", "artifacts": [""]}]}, "field 'artifacts': entries must not be empty"),
    ({"effects": "gh*", "steps": ["a"]}, "field 'effects': expected a list of strings, got string"),
    ({"limits": {"external_ops": 0}, "steps": ["a"]}, "'limits.external_ops': expected a positive whole number"),
    ({"limits": {"external_ops": 1.5}, "steps": ["a"]}, "'limits.external_ops': expected a positive whole number"),
])
def test_mistakes_are_one_line_naming_the_field(data: Dict[str, Any], words: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(data)
    assert words in caught.value.message and "\n" not in caught.value.message
