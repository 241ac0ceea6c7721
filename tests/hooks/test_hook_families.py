"""The families of code a reader overlooks, through the gate of a step that may write only ``src/**``,
tested by doing: each attack of ``tests/shell/test_code.py`` (whose code is ``touch pwned``) and each
link form is sent to PreToolUse as Claude Code sends it, with baton's sandbox and in the fallback;
what Claude Code would run after the answer (nothing on deny, the rewritten command on
``updatedInput``, the original otherwise) is run with bash, PostToolUse follows, and nothing may
change outside ``src/``, in the plan or in the ledger."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import hookkit
import pytest
from conftest import REPO, Hook, JobDir, Payloads

sys.path.insert(0, str(REPO / "tests" / "shell"))  # test_code.py imports its neighbour spec.py
_spec = importlib.util.spec_from_file_location("shell_code_table", REPO / "tests" / "shell" / "test_code.py")
assert _spec is not None and _spec.loader is not None
_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_table)
ATTACKS: List[str] = list(_table.ATTACKS)
LINKS = [
    "cd src/a/b && ln -s ../.. l && mv l .. && echo x >> ../l/.baton/steps.jsonl",
    "cd src/a/b && ln -s ../../.. up && mv up .. && echo x > ../up/outside.txt",
    "ln -s .. src/up && echo x > src/up/outside.txt",
    "mkdir -p src/d && ln -s ../../.baton src/d/x && echo x >> src/d/x/steps.jsonl",
    "cp -a src/uplink src/copy && echo x > src/copy/outside.txt",
    "mv src/a src/b && ln -s .. src/a && echo x > src/a/outside.txt",
    "ln .baton/steps.jsonl src/notes.txt",
    "ln .bat*/steps.jsonl src/notes.txt",
    "cd src && ln -s .. up && cd up && echo x > outside.txt",
]
PLAN = {"steps": [{"id": "build", "writes": ["src/**"]}, "later"]}


def tree(root: Path) -> Dict[str, str]:
    """Every file and link under ``root`` with a digest of its content (or its link target)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def prepare(job: JobDir) -> None:
    job.plan(PLAN)
    (job.project / "src" / "a" / "b").mkdir(parents=True)
    (job.project / "src" / "a.py").write_text("a = 1\n")
    (job.project / "src" / "uplink").symlink_to("..")
    for name in ("README.md", "f", "in"):
        (job.project / name).write_text("x\n")


def outside_src(before: Dict[str, str], after: Dict[str, str]) -> List[str]:
    """Changed entries outside ``src/`` (the link ``src/uplink`` counts as outside); in ``.baton/``
    only the plan and the ledger count (the hooks keep their own bookkeeping there)."""
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    return sorted(k for k in changed if (not k.startswith("src/") or k.startswith("src/uplink"))
                  and (not k.startswith(".baton/") or k in (".baton/plan.json", ".baton/steps.jsonl")))


@pytest.mark.parametrize("command", ATTACKS + LINKS, ids=[c[:60] for c in ATTACKS + LINKS])
def test_nothing_outside_the_step_changes(command: str, inproc_modes: Hook, job: JobDir, payload: Payloads) -> None:
    prepare(job)
    command = command.replace("/work/proj", str(job.project))
    before = tree(job.project)
    result = inproc_modes("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command,
                                                                                 "description": "x"}))
    ran = hookkit.runs_after(result, command)
    if ran is not None:  # as Claude Code runs it after the gate's answer, and tells the hooks after
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(job.home), "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["bash", "-c", ran], cwd=job.project, env=env, capture_output=True, timeout=30,
                       stdin=subprocess.DEVNULL)
        inproc_modes("PostToolUse", payload("post_tool_use_bash", tool_input={"command": ran, "description": "x"}))
    assert outside_src(before, tree(job.project)) == [], (command, result.reason)


def test_the_attacks_are_refused_not_just_harmless(inproc_fallback: Hook, job: JobDir, payload: Payloads) -> None:
    """Each attack would create ``pwned`` in the project root: without the sandbox the gate must
    refuse every one (with it, they run confined: the test above runs them)."""
    prepare(job)
    let_through = [c for c in ATTACKS
                   if not inproc_fallback("PreToolUse", payload("pre_tool_use_bash",
                                                                tool_input={"command": c, "description": "x"})).denied]
    assert let_through == []


def test_a_hard_link_to_the_ledger_made_earlier_is_refused(hook: Hook, job: JobDir, payload: Payloads) -> None:
    prepare(job)
    job.record("build", "running")
    os.link(job.layout.ledger, job.project / "src" / "notes.txt")
    result = hook("PreToolUse", payload("pre_tool_use_bash",
                                        tool_input={"command": "echo x >> src/notes.txt", "description": "x"}))
    assert result.denied and "it is a hard link to steps.jsonl" in result.reason, result.reason
    assert result.reason.endswith("[baton:own-files]")


def test_a_path_into_the_project_makes_program_names_unknown(inproc_fallback: Hook, job: JobDir,
                                                             payload: Payloads,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the sandbox (with it, whatever `ls` turns out to be runs confined)."""
    prepare(job)
    monkeypatch.setenv("PATH", f"{job.project / 'src'}:/usr/bin:/bin")
    result = inproc_fallback("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": "ls",
                                                                                    "description": "x"}))
    assert result.denied and "PATH holds" in result.reason and "[baton:unknown-effect]" in result.reason
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert not inproc_fallback("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": "ls",
                                                                                      "description": "x"})).denied


@pytest.mark.parametrize("command,refused,code", [
    ("pytest -q", False, ""),
    ("pytest -q --junitxml=reports/junit.xml", False, ""),
    ("pytest --junitxml=other.xml", True, "writes"),
    ("pytest --junitxml=.bat''on/steps.jsonl", True, "own-files"),
    ("python3 -m pytest --basetemp=.baton", True, "own-files"),
    ("pytest -q; touch x", True, "writes"),
    ("pytest -q && python3 gen.py", "fallback", "unknown-effect"),  # with the sandbox it runs confined
])
def test_a_test_runner_pattern_still_checks_the_files_it_names(command: str, refused: object, code: str, hook: Hook,
                                                               job: JobDir, payload: Payloads) -> None:
    """The validated phase lets ``pytest*`` run; the files its options name are checked like any write."""
    job.plan({"steps": [{"id": "test", "phase": "validated", "writes": ["reports/**"]}]})
    result = hook("PreToolUse", payload("pre_tool_use_bash", tool_input={"command": command, "description": "x"}))
    refused = (not hook.sandboxed) if refused == "fallback" else refused  # type: ignore[attr-defined]
    assert result.denied is refused, result.reason
    assert not refused or result.reason.endswith(f"[baton:{code}]"), result.reason
