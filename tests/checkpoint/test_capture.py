"""``baton record STEP done`` as a checkpoint, through the CLI: declared artifacts must exist and
are recorded with size and SHA-256; ``--artifact`` adds paths and URIs; the input revision, the
git change and its patch id, and the validation go on the record; ``rerun: never`` holds."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

PLAN = {"steps": [
    {"id": "fetch", "inputs": ["sources/*.txt"], "artifacts": ["data/raw.csv"]},
    {"id": "build", "inputs": ["src/**"], "artifacts": ["dist"], "validate": "test -s dist/app.bin"},
    {"id": "announce", "rerun": "never"},
    "report",
]}
SHA = "ab" * 32


def records(project: Path) -> List[Dict[str, Any]]:
    path = project / ".baton" / "steps.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def job(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> Path:
    project = sandbox.project
    (project / "sources").mkdir()
    (project / "sources" / "a.txt").write_text("alpha\n")
    (project / "src").mkdir()
    (project / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    assert baton("init", "--plan", str(plan)).code == 0
    return project


def test_a_missing_declared_artifact_refuses_the_record(baton: Baton, job: Path) -> None:
    run = baton("record", "fetch", "done", "fetched")
    assert run.code == 1 and run.out == ""
    assert "step fetch must produce data/raw.csv" in run.err and "nothing was recorded" in run.err
    assert records(job) == []
    assert baton("record", "fetch", "running").code == 0  # only done needs the artifacts


def test_done_records_each_artifact_with_size_and_sha256(baton: Baton, job: Path) -> None:
    (job / "data").mkdir()
    (job / "data" / "raw.csv").write_text("a,b\n1,2\n")
    run = baton("record", "fetch", "done", "12 rows")
    assert run.code == 0, run.err
    record = records(job)[-1]
    [artifact] = record["artifacts"]
    body = (job / "data" / "raw.csv").read_bytes()
    assert artifact == {"path": "data/raw.csv", "size": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                        "mtime_ns": (job / "data" / "raw.csv").stat().st_mtime_ns}
    assert record["revision"]["inputs"] and record["revision"]["input_files"] == 1
    assert "commit" not in record["revision"]  # not a git checkout
    assert record["validation"] == {"status": "none"} and record["note"] == "12 rows"


def test_a_folder_artifact_records_every_file_and_validation_is_kept(baton: Baton, job: Path) -> None:
    (job / "dist" / "lib").mkdir(parents=True)
    (job / "dist" / "app.bin").write_bytes(b"\x7fELF")
    (job / "dist" / "lib" / "x.so").write_bytes(b"so")
    run = baton("record", "build", "done", "built")
    assert run.code == 0, run.err
    record = records(job)[-1]
    assert [a["path"] for a in record["artifacts"]] == ["dist/app.bin", "dist/lib/x.so"]
    validation = record["validation"]
    assert validation["status"] == "passed" and validation["command"] == "test -s dist/app.bin"
    assert isinstance(validation["seconds"], float)


def test_a_failed_validation_records_failed_with_its_status(baton: Baton, job: Path) -> None:
    (job / "dist").mkdir()
    (job / "dist" / "app.bin").write_bytes(b"")
    run = baton("record", "build", "done", "built")
    assert run.code == 1 and "was not recorded done" in run.err
    record = records(job)[-1]
    assert record["status"] == "failed" and "artifacts" not in record
    assert record["validation"]["status"] == "failed" and "summary" not in record["validation"]
    assert record["note"].startswith("validate failed (exit 1, no output)")


def test_artifact_options_add_paths_and_uris(baton: Baton, job: Path) -> None:
    (job / "report.pdf").write_bytes(b"%PDF")
    run = baton("record", "report", "done", "--artifact", "report.pdf", "--artifact", "s3://bucket/run-7.tgz",
                "--sha256", SHA, "--", "--artifact is", "in the note")
    assert run.code == 0, run.err
    record = records(job)[-1]
    assert record["note"] == "--artifact is in the note"
    assert record["artifacts"] == [
        {"path": "report.pdf", "size": 4, "sha256": hashlib.sha256(b"%PDF").hexdigest(),
         "mtime_ns": (job / "report.pdf").stat().st_mtime_ns},
        {"uri": "s3://bucket/run-7.tgz", "sha256": SHA}]


@pytest.mark.parametrize("args, code, words", [
    (["--artifact", "nope.bin", "x"], 1, "--artifact nope.bin: no such file"),
    (["--artifact", "report.pdf", "--sha256", SHA, "x"], 1, "is not the one given with --sha256"),
    (["--sha256", SHA, "x"], 2, "follows the --artifact it is for"),
    (["--artifact", "s3://b/x", "--sha256", "abc", "x"], 2, "64 hex digits"),
    (["--artifact"], 2, "needs a value"),
])
def test_artifact_option_mistakes(baton: Baton, job: Path, args: List[str], code: int, words: str) -> None:
    (job / "report.pdf").write_bytes(b"%PDF")
    run = baton("record", "report", "done", *args)
    assert run.code == code and words in run.err and run.err.count("\n") == 1, run.err
    assert records(job) == []


def test_artifacts_go_with_done_only(baton: Baton, job: Path) -> None:
    run = baton("record", "report", "running", "--artifact", "s3://b/x")
    assert run.code == 2 and "--artifact goes with `done`" in run.err


def test_rerun_never_refuses_a_second_run(baton: Baton, job: Path) -> None:
    assert baton("record", "announce", "done", "mail sent to the list").code == 0
    for status in ("running", "done", "failed"):
        run = baton("record", "announce", status, "again")
        assert run.code == 1 and "has rerun: never" in run.err and "not recorded again" in run.err
    assert baton("record", "announce", "skipped").code == 0  # marking it skipped runs nothing
    assert [r["status"] for r in records(job)] == ["done", "skipped"]


@pytest.fixture
def repo(job: Path) -> Path:
    git(job, "init", "-q")
    git(job, "config", "user.email", "t@example.invalid")
    git(job, "config", "user.name", "t")
    git(job, "add", "src", "sources")
    git(job, "commit", "-qm", "start")
    return job


def test_git_work_records_the_commit_the_dirty_flag_and_the_patch_id(baton: Baton, repo: Path) -> None:
    start = git(repo, "rev-parse", "HEAD")
    assert baton("record", "fetch", "running").code == 0
    assert records(repo)[-1]["revision"] == {"commit": start, "dirty": False}
    (repo / "src" / "main.c").write_text("int main(void) { return 1; }\n")
    git(repo, "commit", "-qam", "change")
    (repo / "data").mkdir()
    (repo / "data" / "raw.csv").write_text("x\n")
    assert baton("record", "fetch", "done", "fetched").code == 0
    record = records(repo)[-1]
    head = git(repo, "rev-parse", "HEAD")
    assert record["revision"]["commit"] == head and record["revision"]["dirty"] is False
    expected = subprocess.run(["git", "patch-id", "--stable"], cwd=repo, capture_output=True, text=True, check=True,
                              input=git(repo, "diff", "--full-index", start, "--", ".", ":(exclude).baton") + "\n")
    assert record["change"] == {"base": start, "patch_id": expected.stdout.split()[0]}

    again = baton("record", "fetch", "done", "fetched again")
    assert again.code == 0 and "already recorded done with this same change" in again.out
    assert len(records(repo)) == 2  # not counted twice
    (repo / "src" / "main.c").write_text("int main(void) { return 2; }\n")  # more work, not committed
    more = baton("record", "fetch", "done", "fixed more")
    assert more.code == 0 and more.out.startswith("recorded fetch done")
    last = records(repo)[-1]
    assert last["revision"]["dirty"] is True and last["change"]["base"] == start
    assert last["change"]["patch_id"] != record["change"]["patch_id"]


def test_the_baton_folder_does_not_make_a_checkout_dirty(baton: Baton, repo: Path) -> None:
    git(repo, "add", ".baton")
    git(repo, "commit", "-qm", "track the job")
    assert baton("record", "report", "running").code == 0  # the ledger changed: still not dirty
    assert records(repo)[-1]["revision"]["dirty"] is False
