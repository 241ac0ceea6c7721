"""Two branches that both appended to the ledger, merged with real ``git merge``: through the driver
``baton init`` registers, the merged ledger verifies and the job resumes from either history;
without the driver, the conflict git leaves is resolved by ``baton repair``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, check=False)
    if ok:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _ledger(repo: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (repo / ".baton" / "steps.jsonl").read_bytes().splitlines()]


def _job(baton: Baton, repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    run = baton("init", "survey", "build", "docs", "test", "ship", cwd=repo)
    assert run.code == 0 and "registered baton's merge driver" in run.out, run
    assert (repo / ".baton" / ".gitattributes").read_text() == "steps.jsonl merge=baton\n"
    assert baton("record", "survey", "done", "12 endpoints", cwd=repo).code == 0
    git(repo, "add", ".baton")
    git(repo, "commit", "-qm", "plan and first record")


def _commit(repo: Path, message: str) -> None:
    git(repo, "commit", "-qam", message)


def test_a_merge_of_two_branches_that_both_appended_verifies_and_resumes(baton: Baton, sandbox: Sandbox) -> None:
    repo = sandbox.project
    _job(baton, repo)
    git(repo, "checkout", "-qb", "docs-branch")
    assert baton("record", "docs", "running", cwd=repo).code == 0
    assert baton("record", "docs", "done", "docs written", cwd=repo).code == 0
    assert baton("record", "build", "done", "built on the docs branch", cwd=repo).code == 0
    _commit(repo, "docs")
    theirs = _ledger(repo)
    time.sleep(1.1)  # later records on main: they win where both branches recorded a step
    git(repo, "checkout", "-q", "main")
    assert baton("record", "build", "running", cwd=repo).code == 0
    assert baton("record", "build", "failed", "red on main", cwd=repo).code == 0
    _commit(repo, "build")
    ours = _ledger(repo)
    merged = git(repo, "merge", "--no-edit", "docs-branch")
    assert "CONFLICT" not in merged.stdout
    records = _ledger(repo)
    assert records[:len(ours)] == ours  # ours kept byte for byte
    header, copies = records[len(ours)], records[len(ours) + 1:]
    assert (header["status"], header["met"]) == ("merge", {"seq": 1, "hash": ours[0]["hash"]})
    assert [c["merged"] for c in copies] == [
        {"seq": r["seq"], "prev": r["prev"], "hash": r["hash"]} for r in theirs[1:]]
    assert [(c["step"], c["status"], c["note"], c["ts"]) for c in copies] == [
        (r["step"], r["status"], r["note"], r["ts"]) for r in theirs[1:]]
    verify = baton("verify", cwd=repo)
    assert verify.code == 0 and verify.out.startswith(f"ok: {len(records)} records, chain intact")
    brief = baton("brief", cwd=repo).out.splitlines()
    assert brief[1:3] == ["DONE: survey, docs", "NEXT: build"]  # main's later failure beats the older done
    assert brief[3] == "LAST: build failed red on main" or brief[3].startswith("LAST: ")
    assert any(line.startswith("RETRY: build failed") for line in brief)
    # the other side merges main back: the same history, nothing copied twice
    git(repo, "checkout", "-q", "docs-branch")
    git(repo, "merge", "--no-edit", "main")
    back = _ledger(repo)
    assert baton("verify", cwd=repo).code == 0
    assert baton("brief", cwd=repo).out.splitlines()[1:3] == ["DONE: survey, docs", "NEXT: build"]
    origins = [r.get("merged", {}).get("hash", r["hash"]) for r in back if r["status"] != "merge"]
    assert len(origins) == len(set(origins))
    assert baton("record", "build", "done", "fixed", cwd=repo).code == 0
    _commit(repo, "build fixed")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "--no-edit", "docs-branch")
    final = _ledger(repo)
    origins = [r.get("merged", {}).get("hash", r["hash"]) for r in final if r["status"] != "merge"]
    assert len(origins) == len(set(origins))
    assert baton("verify", cwd=repo).code == 0
    assert baton("brief", cwd=repo).out.splitlines()[1:3] == ["DONE: survey, build, docs", "NEXT: test"]


def test_a_clone_without_the_driver_gets_a_conflict_that_repair_resolves(baton: Baton, sandbox: Sandbox,
                                                                         tmp_path: Path) -> None:
    origin = sandbox.project
    _job(baton, origin)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))  # .git/config is not cloned: no driver here
    git(clone, "checkout", "-qb", "side")
    assert baton("record", "docs", "done", "on the side", cwd=clone).code == 0
    _commit(clone, "side")
    git(clone, "checkout", "-q", "main")
    assert baton("record", "build", "done", "on main", cwd=clone).code == 0
    _commit(clone, "main")
    merged = git(clone, "merge", "--no-edit", "side", ok=False)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    refused = baton("record", "test", "running", cwd=clone)
    assert refused.code == 1 and "`baton repair`" in refused.err
    run = baton("repair", cwd=clone)
    assert run.code == 0 and "resolved a git conflict" in _ledger(clone)[-1]["note"], run
    assert baton("verify", cwd=clone).code == 0
    assert baton("brief", cwd=clone).out.splitlines()[1:3] == ["DONE: survey, build, docs", "NEXT: test"]
    registered = baton("merge", "--register", cwd=clone)
    assert registered.code == 0 and "registered baton's merge driver" in registered.out
    assert "merge.baton.driver" in git(clone, "config", "--list").stdout


def test_a_step_done_on_one_branch_is_not_held_after_the_merge(baton: Baton, sandbox: Sandbox) -> None:
    """Issue 25.12: a parallel job; one branch's worker did step a, the other's claimed it later
    (nobody there knew). After the merge a is done, and nobody holds it."""
    repo = sandbox.project
    git(repo, "init", "-q", "-b", "main")
    (repo / ".baton").mkdir()
    (repo / ".baton" / "plan.json").write_text(json.dumps(
        {"job": "merged", "steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []}]}))
    assert baton("merge", "--register", cwd=repo).code == 0
    assert baton("claim", cwd=repo, extra_env={"BATON_WORKER": "w0"}).out == "worker w0 claimed a\n"
    assert baton("release", cwd=repo, extra_env={"BATON_WORKER": "w0"}).code == 0
    git(repo, "add", ".baton/plan.json", ".baton/steps.jsonl", ".baton/.gitattributes")  # as init's .gitignore
    git(repo, "commit", "-qm", "the plan")
    git(repo, "checkout", "-qb", "side")
    one = {"BATON_WORKER": "w1"}
    assert baton("claim", cwd=repo, extra_env=one).out == "worker w1 claimed a\n"
    assert baton("record", "a", "done", "built on side", cwd=repo, extra_env=one).code == 0
    _commit(repo, "a on side")
    time.sleep(1.1)  # main's claim is later than side's done
    git(repo, "checkout", "-q", "main")
    two = {"BATON_WORKER": "w2"}
    assert baton("claim", cwd=repo, extra_env=two).out == "worker w2 claimed a\n"
    _commit(repo, "a claimed on main")
    merged = git(repo, "merge", "--no-edit", "side")
    assert "CONFLICT" not in merged.stdout
    status = json.loads(baton("status", "--json", cwd=repo, extra_env=two).out)
    assert [(w["worker"], w["step"]) for w in status["workers"]] == [("w1", "b")], status["workers"]  # side's
    assert status["done"] == 1
    assert baton("claim", cwd=repo, extra_env=two).out.startswith("nothing claimed for worker w2")
