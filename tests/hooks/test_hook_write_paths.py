"""PreToolUse on Write/Edit/NotebookEdit: a table of path-escape attempts and what each must get,
under a step restricted to ``src/**``, under a pure seed plan, and under an ungated plan with
``protect`` globs. A deny reason must say what was refused, why, and what to do instead."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, NamedTuple

import pytest
from conftest import Hook, JobDir, Payloads

PROTECT = ["secrets/**", ".env", "src/*.pem"]
PLANS: Dict[str, Dict[str, object]] = {
    "restricted": {"protect": PROTECT, "steps": [{"id": "build", "writes": ["src/**"]}, "later"]},
    "seed": {"steps": ["a", "b"]},
    "protect-only": {"protect": PROTECT, "steps": ["a", "b"]},
}

# What a deny reason must say, per cause: (what/why phrase, what-instead phrase)
WHY = {
    "state": ("inside .baton/, baton's own state", "`baton record`"),
    "key": ("baton's approval key", "/baton:approve"),
    "writes": ("step build may write only src/**", "record it (`baton record STEP done`)"),
    "protect": ("the plan's `protect` list covers it", ""),
}


class Case(NamedTuple):
    name: str
    path: str  # {P} project, {O} a folder beside it, {H} HOME
    restricted: str  # "allow" or a WHY key
    seed: str
    protect_only: str


A, S, K, W, PR = "allow", "state", "key", "writes", "protect"
CASES: List[Case] = [
    Case("relative inside", "src/a.py", A, A, A),
    Case("absolute inside", "{P}/src/a.py", A, A, A),
    Case("nested inside", "{P}/src/deep/er/f.py", A, A, A),
    Case("double slash", "{P}/src//b.py", A, A, A),
    Case("dot-dot out of src", "src/../x.txt", W, A, A),
    Case("dot-dot twice", "{P}/src/a/../../x.txt", W, A, A),
    Case("dot-dot into .baton", "{P}/src/../.baton/plan.json", S, S, S),
    Case("dot-dot round the project", "src/../../project/.baton/steps.jsonl", S, S, S),
    Case("in and out of .baton", "{P}/.baton/../src/a.py", A, A, A),
    Case("dot segments into .baton", "{P}/./.baton/../.baton/x", S, S, S),
    Case("project root file", "{P}/x.txt", W, A, A),
    Case("absolute outside", "{O}/x.txt", W, A, A),
    Case("absolute system path", "/etc/baton-test.conf", W, A, A),
    Case("home via tilde", "~/notes.txt", W, A, A),
    Case("approval key via tilde", "~/.config/baton/approval.key", K, K, K),
    Case("approval key absolute", "{H}/.config/baton/approval.key", K, K, K),
    Case("approval key folder", "{H}/.config/baton/other.txt", K, K, K),
    Case("symlink in src pointing out", "{P}/src/link/x.txt", W, A, A),
    Case("outside symlink pointing into src", "{O}/tosrc/x.txt", A, A, A),
    Case("innocent file symlink into .baton", "{P}/src/notes.txt", S, S, S),
    Case("folder symlink to .baton", "{P}/src/cfg/plan.json", S, S, S),
    Case(".baton through a symlinked project", "{O}/proj/.baton/plan.json", S, S, S),
    Case("upper-case SRC", "{P}/SRC/x.py", W, A, A),
    Case("upper-case .BATON", "{P}/.BATON/plan.json", S, S, S),
    Case("fullwidth full stop", "{P}/\uff0ebaton/plan.json", S, S, S),
    Case("fullwidth b", "{P}/.\uff42aton/steps.jsonl", S, S, S),
    Case("Cyrillic dze in src", "{P}/\u0455rc/x.py", W, A, A),
    Case("the ledger", "{P}/.baton/steps.jsonl", S, S, S),
    Case("relative plan", ".baton/plan.json", S, S, S),
    Case("the state folder itself", "{P}/.baton", S, S, S),
    Case("a new file in .baton", "{P}/.baton/new.json", S, S, S),
    Case("name that starts like .baton", "{P}/src/.batonrc", A, A, A),
    Case("folder that starts like .baton", "{P}/.baton.bak/x", W, A, A),
    Case("protected folder", "{P}/secrets/k.txt", PR, A, PR),
    Case("protected file", "{P}/.env", PR, A, PR),
    Case("protect beats writes", "{P}/src/key.pem", PR, A, PR),
    Case("protected folder through a symlink", "{P}/src/sec/k.txt", PR, A, PR),
]


def build_tree(job: JobDir) -> Dict[str, str]:
    """src/ with symlinks out and into .baton, a folder beside the project with links back in."""
    project, outside = job.project, job.project.parent / "outside"
    for folder in (project / "src", project / "secrets", outside, job.state):
        folder.mkdir(parents=True, exist_ok=True)
    (project / "src" / "a.py").write_text("a = 1\n")
    links = {
        project / "src" / "link": "../../outside",
        outside / "tosrc": str(project / "src"),
        project / "src" / "notes.txt": "../.baton/steps.jsonl",
        project / "src" / "cfg": "../.baton",
        outside / "proj": str(project),
        project / "src" / "sec": "../secrets",
    }
    for link, target in links.items():
        if not link.is_symlink():
            link.symlink_to(target)
    return {"P": str(project), "O": str(outside), "H": str(job.home)}


def expected(case: Case, plan: str) -> str:
    return {"restricted": case.restricted, "seed": case.seed, "protect-only": case.protect_only}[plan]


def check(result_denied: bool, reason: str, want: str, raw: str) -> None:
    if want == A:
        assert not result_denied, reason
        return
    assert result_denied, f"{raw!r} was let through (expected {want})"
    what, instead = WHY[want]
    assert reason.startswith("baton denied writing "), reason
    assert what in reason, reason
    assert instead in reason, reason


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_write_path_table(case: Case, plan: str, hook: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS[plan])
    raw = case.path.format(**build_tree(job))
    data = payload("pre_tool_use_write", tool_input={"file_path": raw, "content": "x\n"})
    result = hook("PreToolUse", data)
    check(result.denied, result.reason, expected(case, plan), raw)


@pytest.mark.parametrize("tool", ["Edit", "NotebookEdit"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_edit_and_notebook_follow_the_same_table(case: Case, tool: str, inproc: Hook, job: JobDir,
                                                 payload: Payloads) -> None:
    job.plan(PLANS["restricted"])
    raw = case.path.format(**build_tree(job))
    if tool == "Edit":
        data = payload("pre_tool_use_edit")
        data["tool_input"]["file_path"] = raw
    else:
        data = payload("pre_tool_use_notebook_edit")
        data["tool_input"]["notebook_path"] = raw
    result = inproc("PreToolUse", data)
    check(result.denied, result.reason, case.restricted, raw)


def test_relative_paths_resolve_against_the_model_cwd(hook: Hook, job: JobDir, payload: Payloads) -> None:
    """After the model ran ``cd src`` the payload's cwd is src/: ``../.baton`` is still .baton."""
    job.plan(PLANS["seed"])
    build_tree(job)
    data = payload("pre_tool_use_write", cwd=job.path("src"),
                   tool_input={"file_path": "../.baton/plan.json", "content": "{}"})
    assert hook("PreToolUse", data).denied
    data["tool_input"]["file_path"] = "b.py"
    job.plan(PLANS["restricted"])
    assert not hook("PreToolUse", data).denied  # src/b.py


def test_state_folder_that_is_itself_a_symlink(hook: Hook, job: JobDir, payload: Payloads, tmp_path: Path) -> None:
    """``.baton`` may be a symlink to a folder elsewhere: that folder is protected as well."""
    real_state = tmp_path / "real-state"
    real_state.mkdir()
    job.state.symlink_to(real_state)
    job.plan(PLANS["seed"])
    for raw in (str(real_state / "plan.json"), str(real_state / "steps.jsonl"), job.path(".baton/plan.json")):
        data = payload("pre_tool_use_write", tool_input={"file_path": raw, "content": "{}"})
        result = hook("PreToolUse", data)
        assert result.denied and "inside .baton/" in result.reason, raw


def test_a_project_reached_through_a_symlink(job: JobDir, inproc: Hook, payload: Payloads,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """CLAUDE_PROJECT_DIR itself may be a symlinked path; globs still apply to the real files."""
    build_tree(job)
    job.plan(PLANS["restricted"])
    alias = job.project.parent / "outside" / "proj"
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(alias))
    for raw, denied in ((f"{alias}/src/a.py", False), (f"{job.project}/src/a.py", False),
                        (f"{alias}/docs/x.md", True), (f"{alias}/.baton/plan.json", True)):
        data = payload("pre_tool_use_write", cwd=str(alias), tool_input={"file_path": raw, "content": "x"})
        assert inproc("PreToolUse", data).denied is denied, raw


@pytest.mark.parametrize("tool_input", [
    {}, {"file_path": ""}, {"file_path": "   "}, {"file_path": None}, {"file_path": 7},
    {"file_path": ["a.txt"]}, {"file_path": "a\x00.txt"}, {"path": "a.txt"},
], ids=["missing", "empty", "blank", "null", "number", "list", "nul byte", "wrong key"])
def test_write_without_a_usable_path_is_denied(tool_input: Dict[str, object], hook: Hook, job: JobDir,
                                               payload: Payloads) -> None:
    job.plan(PLANS["seed"])
    result = hook("PreToolUse", payload("pre_tool_use_write", tool_input=tool_input))
    assert result.denied
    assert "no usable path" in result.reason and "cannot be checked" in result.reason


def test_paths_outside_the_project_are_named_in_the_reason(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan(PLANS["restricted"])
    tree = build_tree(job)
    result = inproc("PreToolUse", payload("pre_tool_use_write", tool_input={"file_path": f"{tree['O']}/x.txt"}))
    assert f"{os.path.realpath(tree['O'])}/x.txt, outside the project" in result.reason
    result = inproc("PreToolUse", payload("pre_tool_use_write", tool_input={"file_path": "src/link/y.txt"}))
    assert "outside the project" in result.reason, "a symlink out of src/ must be judged where it lands"
    result = inproc("PreToolUse", payload("pre_tool_use_write", tool_input={"file_path": "docs/z.md"}))
    assert "baton denied writing docs/z.md (resolved)" in result.reason
