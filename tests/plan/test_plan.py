"""Plan parsing: the seed form, the rich form, and one clear line for every kind of bad plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import pytest

from store.plan.plan import PHASES, Plan, PlanError, Rule, Step, load_plan, parse_plan, parse_text

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

SEED = {"steps": ["a", "b", "c", "d"]}

RICH: Dict[str, Any] = {
    "$schema": "https://example.invalid/baton-plan.json",
    "job": "release-1.2",
    "limits": {"tool_calls": 500, "wall_minutes": 90.5, "cost_usd": 12.5, "stop_blocks": 3},
    "protect": ["secrets/**", ".env"],
    "rules": [{"id": "no-push-main", "deny_bash": "git push * main", "reason": "main is protected"}],
    "steps": [
        "survey",
        {"id": "design", "title": "Write the design", "phase": "planned", "writes": ["docs/**"]},
        {"id": "build", "phase": "implemented", "tools": ["Read", "Edit", "Bash"], "writes": ["src/**", "tests/**"],
         "bash": ["make *", "pytest *"], "validate": "make test"},
        {"id": "ship", "phase": "published", "approval": False, "bash": ["git push *"]},
        {"id": "review", "approval": True},
    ],
}


def test_seed_form_gives_ungated_steps_in_order() -> None:
    plan = parse_plan(SEED)
    assert plan.ids == ("a", "b", "c", "d")
    assert all(s == Step(id=s.id) for s in plan.steps)  # no policy field set at all
    assert not any(s.needs_approval for s in plan.steps)
    assert (plan.job, dict(plan.limits), plan.protect, plan.rules) == ("", {}, (), ())


def test_seed_plan_file_is_used_unchanged(baton: Baton, sandbox: Sandbox) -> None:
    sandbox.state.mkdir()
    plan_file = sandbox.state / "plan.json"
    plan_file.write_text(json.dumps(SEED))
    before = plan_file.read_bytes()
    assert baton("record", "a", "done", "first").code == 0
    run = baton("brief")
    assert run.out.splitlines() == ["PLAN: a, b, c, d", "DONE: a", "NEXT: b", "LAST: a done first"]
    assert plan_file.read_bytes() == before


def test_rich_form_fields_parse() -> None:
    plan = parse_plan(RICH, "rich.json")
    assert plan.source == "rich.json"
    assert plan.job == "release-1.2"
    assert dict(plan.limits) == {"tool_calls": 500, "wall_minutes": 90.5, "cost_usd": 12.5, "stop_blocks": 3}
    assert plan.protect == ("secrets/**", ".env")
    assert plan.rules == (Rule(deny_bash="git push * main", reason="main is protected", id="no-push-main"),)
    assert plan.steps == (
        Step(id="survey"),
        Step(id="design", title="Write the design", phase="planned", writes=("docs/**",)),
        Step(id="build", phase="implemented", tools=("Read", "Edit", "Bash"), writes=("src/**", "tests/**"),
             bash=("make *", "pytest *"), validate="make test"),
        Step(id="ship", phase="published", approval=False, bash=("git push *",)),
        Step(id="review", approval=True),
    )
    assert plan.step("build") is plan.steps[2]
    assert plan.step("nope") is None


@pytest.mark.parametrize("phase, approval, needed", [
    *[(p, None, p in ("approved", "published")) for p in PHASES],
    (None, None, False),
    ("published", False, False),  # an explicit approval wins over the phase
    ("planned", True, True),
    (None, True, True),
])
def test_approval_follows_phase_unless_explicit(phase: Optional[str], approval: Optional[bool], needed: bool) -> None:
    raw: Dict[str, Any] = {"id": "s"}
    if phase is not None:
        raw["phase"] = phase
    if approval is not None:
        raw["approval"] = approval
    assert parse_plan({"steps": [raw]}).steps[0].needs_approval is needed


def test_load_plan_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(RICH), encoding="utf-8")
    plan = load_plan(path)
    assert plan.ids == ("survey", "design", "build", "ship", "review")
    assert plan.source == str(path)


def test_load_plan_missing_file_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as info:
        load_plan(tmp_path / "plan.json")
    assert str(tmp_path / "plan.json") in info.value.message
    assert "baton init" in info.value.message
    assert info.value.code == 2


def _step(**fields: Any) -> str:
    return json.dumps({"steps": ["ok", {"id": "s", **fields}]})


def _job(**fields: Any) -> str:
    return json.dumps({"steps": ["ok"], **fields})


# (case name, plan text, the step the message must name or None, the field it must name)
BAD_PLANS: List[Tuple[str, str, Optional[str], str]] = [
    ("invalid JSON", '{"steps": ["a",]}', None, "invalid JSON at line 1"),
    ("not an object", '["a", "b"]', None, "'steps'"),
    ("no steps", "{}", None, "field 'steps'"),
    ("empty steps", '{"steps": []}', None, "field 'steps'"),
    ("steps not a list", '{"steps": "a b"}', None, "field 'steps'"),
    ("step not a string or object", '{"steps": ["a", 7]}', "step 2", "expected a string or an object"),
    ("duplicate ids", '{"steps": ["a", "b", "a"]}', "step 3 ('a')", "field 'id'"),
    ("duplicate ids, rich", json.dumps({"steps": ["s", {"id": "s", "title": "again"}]}), "step 2 ('s')", "field 'id'"),
    ("missing id", json.dumps({"steps": ["ok", {"title": "t"}]}), "step 2", "field 'id'"),
    ("id not a string", _step(id=5), "step 2", "field 'id'"),
    ("empty id", json.dumps({"steps": ["ok", " "]}), "step 2", "field 'id'"),
    ("id too long", json.dumps({"steps": ["ok", "x" * 201]}), "step 2", "field 'id'"),
    ("control char in id", json.dumps({"steps": ["ok", "a\u0007b"]}), "step 2", "field 'id'"),
    ("newline in id", json.dumps({"steps": ["ok", "a\nNEXT: b"]}), "step 2", "field 'id'"),
    ("line separator in id", json.dumps({"steps": ["ok", {"id": "a\u2028b"}]}), "step 2", "field 'id'"),
    ("unknown step field", _step(colour="red"), "step 2 ('s')", "field 'colour'"),
    ("unknown step field with a newline", _step(**{"x\ny": 1}), "step 2 ('s')", "field 'x\\ny'"),
    ("title not a string", _step(title=["t"]), "step 2 ('s')", "field 'title'"),
    ("bad phase", _step(phase="shipping"), "step 2 ('s')", "field 'phase'"),
    ("phase not a string", _step(phase=3), "step 2 ('s')", "field 'phase'"),
    ("tools not a list", _step(tools="Bash"), "step 2 ('s')", "field 'tools'"),
    ("tools of numbers", _step(tools=[1, 2]), "step 2 ('s')", "field 'tools'"),
    ("writes not a list", _step(writes={"src": True}), "step 2 ('s')", "field 'writes'"),
    ("writes with an empty glob", _step(writes=["src/**", " "]), "step 2 ('s')", "field 'writes'"),
    ("bash not a list", _step(bash="make"), "step 2 ('s')", "field 'bash'"),
    ("approval not a boolean", _step(approval="yes"), "step 2 ('s')", "field 'approval'"),
    ("validate not a string", _step(validate=["make", "test"]), "step 2 ('s')", "field 'validate'"),
    ("validate empty", _step(validate="  "), "step 2 ('s')", "field 'validate'"),
    ("unknown job field", _job(owner="me"), None, "field 'owner'"),
    ("job not a string", _job(job=12), None, "field 'job'"),
    ("limits not an object", _job(limits=[1]), None, "field 'limits'"),
    ("unknown limit", _job(limits={"speed": 3}), None, "field 'limits.speed'"),
    ("zero limit", _job(limits={"tool_calls": 0}), None, "field 'limits.tool_calls'"),
    ("negative limit", _job(limits={"cost_usd": -1}), None, "field 'limits.cost_usd'"),
    ("fractional count limit", _job(limits={"tool_calls": 1.5}), None, "field 'limits.tool_calls'"),
    ("boolean limit", _job(limits={"turns": True}), None, "field 'limits.turns'"),
    ("string limit", _job(limits={"tokens": "1000"}), None, "field 'limits.tokens'"),
    ("NaN limit", '{"steps": ["ok"], "limits": {"cost_usd": NaN}}', None, "field 'limits.cost_usd'"),
    ("infinite limit", '{"steps": ["ok"], "limits": {"wall_minutes": Infinity}}', None, "field 'limits.wall_minutes'"),
    ("number too long to read", '{"steps": ["ok"], "limits": {"tokens": 1' + "0" * 5000 + "}}", None, "invalid JSON"),
    ("nesting too deep", '{"steps": ' + "[" * 100000 + "]" * 100000 + "}", None, "invalid JSON"),
    ("protect not a list", _job(protect=".env"), None, "field 'protect'"),
    ("rules not a list", _job(rules={"deny_bash": "x"}), None, "field 'rules'"),
    ("rule without a kind", _job(rules=[{"reason": "r"}]), "rule 1", "needs one of the fields deny_bash"),
    ("rule with an unknown field", _job(rules=[{"deny_bash": "x", "allow": "y"}]), "rule 1", "field 'allow'"),
    ("rule reason not a string", _job(rules=[{"deny_bash": "x", "reason": 1}]), "rule 1", "'reason'"),
    ("needs not a list", _step(needs="ok"), "step 2 ('s')", "field 'needs'"),
    ("needs an unknown step", _step(needs=["nope"]), "step 2 ('s')", "field 'needs'"),
    ("needs a step twice", _step(needs=["ok", "ok"]), "step 2 ('s')", "field 'needs'"),
    ("needs itself", _step(needs=["s"]), "step 2 ('s')", "field 'needs'"),
    ("needs in a cycle", json.dumps({"steps": [{"id": "a", "needs": ["b"]}, "b"]}), "step 1 ('a')", "field 'needs'"),
    ("needs in a longer cycle", json.dumps({"steps": ["a", {"id": "b", "needs": ["d"]}, "c", "d"]}),
     "step 2 ('b')", "a cycle: 'b' -> 'd' -> 'c' -> 'b'"),
    ("zero lease", _job(limits={"lease_minutes": 0}), None, "field 'limits.lease_minutes'"),
    ("sandbox not an object", _job(sandbox=True), None, "field 'sandbox'"),
    ("unknown sandbox field", _job(sandbox={"writes": []}), None, "field 'sandbox.writes'"),
    ("sandbox flag not a boolean", _job(sandbox={"auto_allow": "yes"}), None, "field 'sandbox.auto_allow'"),
    ("bad git mode", _job(sandbox={"git": "read"}), None, "field 'sandbox.git'"),
    ("bad network", _job(sandbox={"network": "off"}), None, "field 'sandbox.network'"),
    ("empty allow_hosts", _job(sandbox={"network": {"allow_hosts": []}}), None, "field 'sandbox.network.allow_hosts'"),
    ("bad host", _job(sandbox={"network": {"allow_hosts": ["a/b"]}}), None, "field 'sandbox.network.allow_hosts'"),
    ("bad caches", _job(sandbox={"caches": "none"}), None, "field 'sandbox.caches'"),
    ("extra_writes not globs", _job(sandbox={"extra_writes": ".venv"}), None, "field 'sandbox.extra_writes'"),
    ("job-only sandbox field in a step", _step(sandbox={"auto_allow": True}), "step 2 ('s')",
     "field 'sandbox.auto_allow'"),
    ("bad step git", _step(sandbox={"git": 1}), "step 2 ('s')", "field 'sandbox.git'"),
]


@pytest.mark.parametrize("name, text, step, field", BAD_PLANS, ids=[c[0] for c in BAD_PLANS])
def test_bad_plan_message_names_file_step_and_field(name: str, text: str, step: Optional[str], field: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_text(text, "plans/p.json")
    message = info.value.message
    assert message.startswith("plans/p.json: ")
    assert "\n" not in message and "\r" not in message
    assert field in message
    if step is not None:
        assert f": {step}" in message
    else:
        assert ": step " not in message
    assert info.value.code == 2


@pytest.mark.parametrize("name, text, step, field", BAD_PLANS, ids=[c[0] for c in BAD_PLANS])
def test_bad_plan_through_cli_is_one_line_and_writes_nothing(
        baton: Baton, sandbox: Sandbox, tmp_path: Path, name: str, text: str, step: Optional[str], field: str) -> None:
    plan_file = tmp_path / "bad-plan.json"
    plan_file.write_text(text, encoding="utf-8")

    init = baton("init", "--plan", str(plan_file))
    assert (init.code, init.out) == (2, "")
    assert init.err.count("\n") == 1 and init.err.startswith(f"baton: {plan_file}: ")
    assert field in init.err and (step is None or step in init.err)
    assert "Traceback" not in init.err
    assert not sandbox.state.exists()

    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_text(text, encoding="utf-8")
    brief = baton("brief")
    assert (brief.code, brief.out) == (2, "")
    assert brief.err.count("\n") == 1 and brief.err.startswith(f"baton: {sandbox.state / 'plan.json'}: ")
    assert field in brief.err and (step is None or step in brief.err)
    assert "Traceback" not in brief.err
    assert sorted(p.name for p in sandbox.state.iterdir()) == ["plan.json"]


def test_plan_that_is_not_utf8_is_one_line(baton: Baton, sandbox: Sandbox) -> None:
    sandbox.state.mkdir()
    (sandbox.state / "plan.json").write_bytes(b'{"steps": ["\xff"]}')
    run = baton("brief")
    assert (run.code, run.out) == (2, "")
    assert run.err.count("\n") == 1 and "cannot read the plan" in run.err
    assert "Traceback" not in run.err


def test_plan_objects_are_immutable() -> None:
    plan: Plan = parse_plan(RICH)
    with pytest.raises(AttributeError):
        plan.steps[0].id = "other"  # type: ignore[misc]


def test_needs_make_a_plan_parallel_and_a_step_without_needs_needs_the_one_before() -> None:
    plan = parse_plan({"limits": {"lease_minutes": 0.5}, "steps": [
        {"id": "a", "needs": []}, {"id": "b", "needs": []}, {"id": "c", "needs": ["a", "b"]}, "d"]})
    assert plan.parallel and plan.limits["lease_minutes"] == 0.5
    assert [plan.needs_of(i) for i in range(4)] == [(), (), ("a", "b"), ("c",)]
    seed = parse_plan(SEED)
    assert not seed.parallel and [seed.needs_of(i) for i in range(4)] == [(), ("a",), ("b",), ("c",)]
def test_sandbox_settings_default_and_a_step_overrides_git_and_network() -> None:
    plan = parse_plan({"sandbox": {"auto_allow": True, "network": {"allow_hosts": ["PyPI.org", "*.github.com"]},
                                   "caches": "private", "extra_writes": [".venv/**"]},
                       "steps": ["a", {"id": "b", "sandbox": {"git": "ro", "network": "none"}}]})
    job = plan.sandbox
    assert (job.enabled, job.require, job.auto_allow, job.git_mode) == (True, False, True, "rw")
    assert job.network_mode == ("pypi.org", "*.github.com") and job.extra_writes == (".venv/**",)
    step = job.for_step(plan.steps[1].sandbox)
    assert (step.git_mode, step.network_mode, step.caches, step.auto_allow) == ("ro", "none", "private", True)
    assert job.for_step(plan.steps[0].sandbox) is job
    seed = parse_plan({"steps": ["a"]}).sandbox
    assert (seed.enabled, seed.git_mode, seed.network_mode, seed.caches) == (True, "rw", "host", "shared")
