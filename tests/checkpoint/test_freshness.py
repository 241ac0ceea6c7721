"""Whether a DONE step's checkpoint still holds: CHANGED when an artifact is missing or differs,
STALE when its inputs changed (not for ``rerun: never``), hashing only what size and mtime do not
settle, within a time budget, and ``baton verify --artifacts`` for all of them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import pytest

from store.checkpoint import brief_news, digests, freshness
from store.state.job import Job
from store.state.location import Layout

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

PLAN = {"steps": [
    {"id": "fetch", "inputs": ["sources"], "artifacts": ["data/raw.csv"]},
    {"id": "build", "inputs": ["src/**/*.c"], "artifacts": ["dist/app.bin"], "rerun": "redo"},
    {"id": "announce", "inputs": ["notes.md"], "artifacts": ["sent.txt"], "rerun": "never"},
    "report",
]}


def write(project: Path, rel: str, text: str) -> Path:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def age(path: Path, seconds: float = 60) -> None:
    """Make a file look written a while ago (the hash cache skips files changed this very second)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def job(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> Path:
    project = sandbox.project
    for rel, text in (("sources/a.txt", "a\n"), ("src/x/main.c", "int x;\n"), ("notes.md", "hello\n"),
                      ("data/raw.csv", "1,2\n"), ("dist/app.bin", "BIN"), ("sent.txt", "sent\n")):
        age(write(project, rel, text))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    assert baton("init", "--plan", str(plan)).code == 0
    for step in ("fetch", "build", "announce"):
        assert baton("record", step, "done", f"{step} done").code == 0
    return project


def lines(text: str, prefix: str) -> List[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def test_nothing_changed_means_no_news(baton: Baton, job: Path) -> None:
    brief = baton("brief").out
    assert not lines(brief, "CHANGED") and not lines(brief, "STALE") and not lines(brief, "UNCHECKED")
    verified = baton("verify", "--artifacts")
    assert verified.code == 0
    assert "ok      fetch: 1 artifacts unchanged" in verified.out and "ok      build: 1 input files unchanged" in \
        verified.out


def test_a_deleted_artifact_is_changed(baton: Baton, job: Path) -> None:
    (job / "data" / "raw.csv").unlink()
    [line] = lines(baton("brief").out, "CHANGED: ")
    assert line.startswith("CHANGED: fetch: data/raw.csv is missing: do not trust it: check it")
    assert "baton record fetch running, redo it, then record it done" in line
    verified = baton("verify", "--artifacts")
    assert verified.code == 1 and "CHANGED fetch: data/raw.csv is missing" in verified.out


def test_an_artifact_with_other_content_is_changed_same_size_or_not(baton: Baton, job: Path) -> None:
    write(job, "dist/app.bin", "XYZ")  # same size, new mtime: hashed, differs
    write(job, "data/raw.csv", "1,2,3\n")  # other size: no need to hash
    changed = lines(baton("brief").out, "CHANGED: ")
    assert any("dist/app.bin changed (its content differs)" in line for line in changed)
    assert any("data/raw.csv changed (size 4 -> 6)" in line for line in changed)


def test_a_touched_artifact_with_the_same_content_is_not_changed(baton: Baton, job: Path) -> None:
    os.utime(job / "dist" / "app.bin")
    assert not lines(baton("brief").out, "CHANGED")


def test_changed_inputs_are_stale_with_the_advice_that_fits_rerun(baton: Baton, job: Path) -> None:
    write(job, "sources/b.txt", "new source\n")
    write(job, "src/x/main.c", "int y;\n")
    write(job, "notes.md", "edited\n")  # announce has rerun: never, so no STALE line for it
    stale = lines(baton("brief").out, "STALE: ")
    assert len(stale) == 2, stale
    fetch, build = stale
    assert fetch.startswith("STALE: fetch: its inputs changed since it was recorded done (changed: sources/b.txt)")
    assert fetch.endswith("baton record fetch running, redo it, then record it done")
    assert build.startswith("STALE: build: its inputs changed") and "redo it: baton record build running" in build


def test_a_never_step_with_a_missing_artifact_says_not_to_redo_it(baton: Baton, job: Path) -> None:
    (job / "sent.txt").unlink()
    [line] = lines(baton("brief").out, "CHANGED: ")
    assert line.startswith("CHANGED: announce: sent.txt is missing") and "do not redo it; tell the person" in line


def test_only_changed_files_are_hashed(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(job / ".baton", job)
    job_now = Job(layout, os.environ)
    freshness.check(layout, job_now.plan, job_now.snap, None)  # fills the cache
    hashed: List[str] = []
    real = digests.file_sha256

    def counting(path: str, deadline: Optional[float] = None) -> str:
        hashed.append(os.path.relpath(path, job))
        return real(path, deadline)

    monkeypatch.setattr(digests, "file_sha256", counting)
    checked = freshness.check(layout, job_now.plan, job_now.snap, None)
    assert hashed == [] and all(f.kind == "ok" for f in checked.findings)
    age(write(job, "src/x/main.c", "int z;\n"), 30)
    freshness.check(layout, job_now.plan, job_now.snap, None)
    assert hashed == ["src/x/main.c"]


def test_the_check_stops_at_its_deadline_and_says_so(job: Path) -> None:
    layout = Layout(job / ".baton", job)
    loaded = Job(layout, os.environ)
    checked = freshness.check(layout, loaded.plan, loaded.snap, time.monotonic() - 1)
    assert not checked.complete
    news = freshness.news(layout, loaded.plan, loaded.snap, budget=-1)
    assert news[-1].startswith("UNCHECKED: not every DONE step's artifacts and inputs could be checked")


def test_no_checkpoint_costs_nothing(baton: Baton, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    assert baton("init", "a", "b").code == 0
    assert baton("record", "a", "done").code == 0
    layout = Layout(sandbox.project / ".baton", sandbox.project)
    monkeypatch.setattr(freshness, "news", lambda *a, **k: pytest.fail("checked a job without checkpoints"))
    assert brief_news(Job(layout, os.environ)) == []


def test_the_cache_is_rebuilt_when_lost_and_ignores_garbage(baton: Baton, job: Path) -> None:
    cache = job / ".baton" / "hashes.json"
    cache.write_text("{not json")
    assert not lines(baton("brief").out, "CHANGED")
    assert json.loads(cache.read_text())  # written again
    cache.unlink()
    (job / "data" / "raw.csv").unlink()
    assert lines(baton("brief").out, "CHANGED: fetch")


def test_a_failing_check_still_lets_the_brief_through(baton: Baton, job: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(job / ".baton", job)

    def broken(*args: object, **kwargs: object) -> List[str]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(freshness, "news", broken)
    lines_ = brief_news(Job(layout, os.environ))
    assert lines_ == ["UNCHECKED: the DONE steps' artifacts could not be checked (RuntimeError: disk on fire); "
                      "run `baton verify --artifacts`"]


def test_a_deadline_that_passes_after_the_last_checkpoint_leaves_nothing_unchecked(
        job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step with a checkpoint (announce) is checked, past the deadline; the plain step after
    it has nothing to check, so the check is complete (it once said UNCHECKED there)."""
    layout = Layout(job / ".baton", job)
    loaded = Job(layout, os.environ)
    artifacts = freshness._artifacts

    def slow(layout: Layout, step, record, hasher, deadline):  # type: ignore[no-untyped-def]
        if step.id == "announce":
            time.sleep(0.3)
        return artifacts(layout, step, record, hasher, deadline)

    monkeypatch.setattr(freshness, "_artifacts", slow)
    checked = freshness.check(layout, loaded.plan, loaded.snap, time.monotonic() + 0.2)
    assert checked.complete and [f.step for f in checked.findings if f.kind == "ok"].count("announce") == 1


def test_verify_reads_a_database_snapshot_an_earlier_baton_saved_without_marks(
        job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job in a database whose snapshot a baton before the checkpoint mark saved: its DONE steps
    carry neither an offset nor the mark. ``verify --artifacts`` (no deadline) reads every DONE
    step's record by seq and finds what changed; it once said there was nothing to check."""
    from store.state import checkpointed, remote

    layout = Layout(job / ".baton", job)
    loaded = Job(layout, os.environ)
    for info in loaded.snap.steps.values():  # what the earlier baton's fold left: no offset, no mark
        info.pop("at", None)
    by_seq = {json.loads(line)["seq"]: line for line in layout.ledger.read_text().splitlines() if line}

    class Database:
        def lines_at(self, seqs: List[int]) -> dict:  # type: ignore[type-arg]
            return {seq: by_seq[seq] for seq in seqs if seq in by_seq}

    monkeypatch.setattr(checkpointed, "_in_database", lambda: True)
    monkeypatch.setattr(remote, "open_job", lambda layout: Database())
    (job / "data" / "raw.csv").unlink()
    findings = freshness.check(layout, loaded.plan, loaded.snap, None).findings
    assert [(f.step, f.kind) for f in findings if f.kind != "ok"] == [("fetch", "changed")], findings
    assert {f.step for f in findings} == {"fetch", "build", "announce"}
