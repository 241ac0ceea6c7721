"""Checkpoints of a job kept in PostgreSQL (issue 25.12): the brief's CHANGED and STALE lines and
``baton verify --artifacts`` say of it exactly what they say of the same job kept in files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Tuple

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

PLAN = {"job": "cp", "steps": [
    {"id": "build", "inputs": ["src/*.c"], "rerun": "redo"},  # the artifact is named when it is recorded done
    {"id": "package", "artifacts": ["dist/app.tar"]},
    {"id": "docs", "inputs": ["docs/*.md"], "artifacts": ["site/index.html"]},
    "announce",
]}
FILES = {"src/main.c": "int main;\n", "dist/app.txt": "built\n", "dist/app.tar": "tar\n", "docs/a.md": "# A\n",
         "site/index.html": "<p>A</p>\n"}


def write(root: Path, rel: str, text: str, aged: bool = True) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if aged:  # written a while ago: the hash cache skips files changed this very second
        then = time.time() - 60
        os.utime(path, (then, then))


def news(text: str) -> List[str]:
    return [line for line in text.splitlines() if line.startswith(("CHANGED", "STALE", "UNCHECKED"))]


def run_job(baton: Baton, root: Path, env: Mapping[str, str], tmp: Path) -> Tuple[List[str], List[str], int, str]:
    """A job with three checkpointed DONE steps, then one artifact changed, one deleted and one
    step's inputs changed: the brief's news, ``verify --artifacts``' lines and exit code, and the
    brief before the changes."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        write(root, rel, text)
    plan = tmp / f"plan-{root.name}.json"
    plan.write_text(json.dumps(PLAN))
    assert baton("init", "--plan", str(plan), cwd=root, extra_env=env).code == 0
    for args in (("build", "done", "--artifact", "dist/app.txt", "built"), ("package", "done", "packed"),
                 ("docs", "done", "drawn"), ("announce", "done", "sent")):
        done = baton("record", *args, cwd=root, extra_env=env)
        assert done.code == 0 and not done.out.startswith("queued"), done
    before = baton("brief", cwd=root, extra_env=env)
    assert before.code == 0, before
    write(root, "dist/app.txt", "built again\n", aged=False)
    (root / "site" / "index.html").unlink()
    write(root, "src/main.c", "int main(void);\n", aged=False)
    brief = baton("brief", cwd=root, extra_env=env)
    assert brief.code == 0 and brief.err == "", brief
    verified = baton("verify", "--artifacts", cwd=root, extra_env=env)
    return news(brief.out), verified.out.splitlines()[1:], verified.code, before.out


def test_changed_and_stale_say_the_same_of_a_job_in_files_and_in_the_database(
        baton: Baton, sandbox: Sandbox, pg_url: str, tmp_path: Path) -> None:
    in_files = run_job(baton, tmp_path / "files", {}, tmp_path)
    in_database = run_job(baton, tmp_path / "database", {"BATON_DATABASE_URL": pg_url}, tmp_path)
    brief, verified, code, before = in_database
    assert news(before) == [] and "DEGRADED" not in before, before
    assert brief == in_files[0], (brief, in_files[0])
    assert [line.split(": ")[:3] for line in brief] == [
        ["CHANGED", "build", "dist/app.txt changed (size 6 -> 12)"], ["CHANGED", "docs", "site/index.html is missing"],
        ["STALE", "build", "its inputs changed since it was recorded done (changed"]], brief
    assert code == 1 and verified == in_files[1] and in_files[2] == 1, (verified, in_files)
    assert "CHANGED build: dist/app.txt changed (size 6 -> 12)" in verified
    assert "ok      package: 1 artifacts unchanged" in verified
    assert "CHANGED docs: site/index.html is missing" in verified
    assert any(line.startswith("STALE   build: its inputs changed") for line in verified), verified


def test_a_job_pushed_to_the_database_keeps_its_checkpoints(
        baton: Baton, sandbox: Sandbox, pg_url: str, tmp_path: Path) -> None:
    """``baton store push`` folds the file's records as the database store does: marked by seq."""
    root = tmp_path / "pushed"
    brief, verified, code, _ = run_job(baton, root, {}, tmp_path)
    assert baton("store", "push", pg_url, cwd=root).code == 0
    env: Dict[str, str] = {"BATON_DATABASE_URL": pg_url}
    assert news(baton("brief", cwd=root, extra_env=env).out) == brief and len(brief) == 3
    again = baton("verify", "--artifacts", cwd=root, extra_env=env)
    assert (again.code, again.out.splitlines()[1:]) == (code, verified)


def test_a_job_without_checkpoints_has_nothing_to_check(baton: Baton, sandbox: Sandbox, pg_url: str,
                                                        tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"job": "plain", "steps": ["a", "b"]}))
    env = {"BATON_DATABASE_URL": pg_url}
    assert baton("init", "--plan", str(plan), extra_env=env).code == 0
    assert baton("record", "a", "done", "ok", extra_env=env).code == 0
    verified = baton("verify", "--artifacts", extra_env=env)
    assert verified.code == 0 and "artifacts: no DONE step carries artifacts or an inputs digest" in verified.out
    assert news(baton("brief", extra_env=env).out) == []
