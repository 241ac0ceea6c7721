"""Approvals bound to what was approved: the record keeps the step's definition and the job's
rules with their digest (signed); an edit that lets the step do more voids the approval and the
brief says why; an edit that narrows it, or touches nothing it covers, keeps it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from store.cli import actions
from store.gate import policy
from store.gate.call import Call
from store.plan.plan import parse_plan
from store.plan.scope import scope_of, widened
from store.state import approvals
from store.state.job import Job
from store.state.location import Layout

BASE: Dict[str, Any] = {
    "rules": [{"deny_bash": "git push*"}], "protect": ["secrets/**"], "effects": ["gh pr create*"],
    "sandbox": {"git": "ro", "network": {"allow_hosts": ["pypi.org"]}, "caches": "private"},
    "steps": ["prepare", {"id": "ship", "phase": "published", "tools": ["Bash", "Write"], "writes": ["dist/**"],
                          "bash": ["make release*"], "validate": "make check"}],
}


def edited(change: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    plan = json.loads(json.dumps(BASE))
    change(plan)
    return plan


def ship(plan: Dict[str, Any]) -> Dict[str, Any]:
    step: Dict[str, Any] = plan["steps"][1]
    return step


WIDER = {
    "writes grow": (lambda p: ship(p)["writes"].append("src/**"), "writes now include src/**"),
    "writes unrestricted": (lambda p: ship(p).pop("writes"), "writes is no longer restricted"),
    "another tool": (lambda p: ship(p)["tools"].append("Edit"), "tools now include Edit"),
    "tools unrestricted": (lambda p: ship(p).pop("tools"), "tools is no longer restricted"),
    "another bash pattern": (lambda p: ship(p)["bash"].append("rm *"), "bash now include rm *"),
    "approval removed": (lambda p: ship(p).update(approval=False), "it no longer needs an approval"),
    "phase changed": (lambda p: ship(p).update(phase="implemented"), "its phase changed from published to"),
    "validate removed": (lambda p: ship(p).pop("validate"), "its validate command was removed"),
    "validate changed": (lambda p: ship(p).update(validate="true"), "its validate command changed"),
    "rule removed": (lambda p: p.pop("rules"), "the job rule 'git push*' was removed"),
    "protect removed": (lambda p: p.update(protect=[]), "the protect glob 'secrets/**' was removed"),
    "effects removed": (lambda p: p.update(effects=[]), "the effects pattern 'gh pr create*' was removed"),
    "sandbox off": (lambda p: p["sandbox"].update(enabled=False), "baton's sandbox is turned off"),
    "sandbox auto_allow": (lambda p: p["sandbox"].update(auto_allow=True), "now run without a prompt (auto_allow)"),
    "sandbox git": (lambda p: p["sandbox"].update(git="rw"), "git is now writable in the sandbox"),
    "step's network": (lambda p: ship(p).update(sandbox={"network": "host"}), "network now reaches host"),
    "more hosts": (lambda p: p["sandbox"].update(network={"allow_hosts": ["pypi.org", "evil.example"]}),
                   "network now reaches more hosts"),
    "shared caches": (lambda p: p["sandbox"].update(caches="shared"), "shared package caches are writable"),
    "extra writes": (lambda p: p["sandbox"].update(extra_writes=[".venv/**"]),
                     "sandbox.extra_writes now include .venv/**"),
}
SAME_OR_NARROWER = {
    "nothing": lambda p: None,
    "title": lambda p: ship(p).update(title="Ship it"),
    "fewer writes": lambda p: ship(p).update(writes=[]),
    "fewer tools": lambda p: ship(p).update(tools=["Bash"]),
    "fewer bash": lambda p: ship(p).update(bash=[]),
    "another rule": lambda p: p["rules"].append({"deny_bash": "rm -rf*"}),
    "more protected": lambda p: p["protect"].append("ci/**"),
    "another step": lambda p: p["steps"].append("later"),
    "order of a list": lambda p: ship(p).update(tools=["Write", "Bash"]),
    "sandbox required": lambda p: p["sandbox"].update(require=True),
    "fewer hosts": lambda p: p["sandbox"].update(network="none"),
}


def scope(plan: Dict[str, Any]) -> Dict[str, Any]:
    parsed = parse_plan(plan)
    step = parsed.step("ship")
    assert step is not None
    return scope_of(parsed, step)


@pytest.mark.parametrize("name", sorted(WIDER))
def test_an_edit_that_lets_the_step_do_more_voids_the_approval(name: str) -> None:
    change, reason = WIDER[name]
    why = widened(scope(BASE), scope(edited(change)))
    assert any(reason in w for w in why), why


@pytest.mark.parametrize("name", sorted(SAME_OR_NARROWER))
def test_an_edit_that_adds_nothing_keeps_the_approval(name: str) -> None:
    assert widened(scope(BASE), scope(edited(SAME_OR_NARROWER[name]))) == []


def test_the_digest_is_stable_and_an_old_approval_without_scope_keeps_counting() -> None:
    assert scope(BASE)["digest"] == scope(edited(lambda p: None))["digest"]
    assert widened({}, scope(BASE)) == [] and widened(None, scope(BASE)) == []  # type: ignore[arg-type]
    older = json.loads(json.dumps(scope(BASE)))
    del older["job"]["sandbox"]  # approved before the sandbox was part of the scope
    older["digest"] = "0" * 32
    assert widened(older, scope(edited(lambda p: p["sandbox"].update(enabled=False)))) == []


@pytest.fixture
def job(sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.setenv("BATON_FSYNC", "0")
    layout = Layout(sandbox.project / ".baton", sandbox.project)
    layout.root.mkdir()
    layout.plan.write_text(json.dumps(BASE))
    actions.record_step(layout, os.environ, "prepare", "done", "")
    actions.approve_step(layout, os.environ, "ship", "go", "/baton:approve typed in the prompt")
    return layout


def test_the_approval_record_keeps_what_was_approved_and_signs_its_digest(job: Layout) -> None:
    record = json.loads(job.ledger.read_text().splitlines()[-1])
    assert record["scope"] == scope(BASE)
    entry = Job(job, os.environ).snap.approvals["ship"]
    assert approvals.is_valid(entry, approvals.read_key(os.environ), Job(job, os.environ).key_scope, "ship")
    forged = {**entry, "scope": {**entry["scope"], "digest": scope(edited(WIDER["writes grow"][0]))["digest"]}}
    assert not approvals.is_valid(forged, approvals.read_key(os.environ), Job(job, os.environ).key_scope, "ship")


def brief_lines(layout: Layout) -> List[str]:
    return Job(layout, os.environ).brief().splitlines()


def test_a_widened_plan_sends_the_step_back_to_waiting_and_the_brief_says_why(job: Layout) -> None:
    assert Job(job, os.environ).approved("ship")
    job.plan.write_text(json.dumps(edited(WIDER["writes grow"][0])))
    loaded = Job(job, os.environ)
    assert not loaded.approved("ship") and loaded.waiting_for_approval()
    lines = brief_lines(job)
    assert any(line.startswith("WAITING: ship needs a person's approval") for line in lines)
    [why] = [line for line in lines if line.startswith("APPROVAL: ")]
    assert "no longer counts" in why and "writes now include src/**" in why
    call = Call("Write", {"file_path": str(job.project / "dist" / "x")}, str(job.project), str(job.project),
                str(job.root), str(Path.home()), os.environ)
    reason = policy.decide(call, loaded.plan, loaded.next, policy.read_only_reason(loaded, call))
    assert reason is not None and reason.endswith("[baton:waiting]")
    again = actions.approve_step(job, os.environ, "ship", "", "/baton:approve typed in the prompt")
    assert again.startswith("approved ship")
    assert Job(job, os.environ).approved("ship") and not [ln for ln in brief_lines(job) if ln.startswith("APPROVAL")]


def test_a_narrowed_plan_keeps_the_approval(job: Layout) -> None:
    job.plan.write_text(json.dumps(edited(SAME_OR_NARROWER["fewer writes"])))
    assert Job(job, os.environ).approved("ship")
    assert not [line for line in brief_lines(job) if line.startswith(("WAITING", "APPROVAL"))]
