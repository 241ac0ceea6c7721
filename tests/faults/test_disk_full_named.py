"""Issue 25 item 12: on a really full disk (a small tmpfs filled to the last byte), ``baton once``
and ``baton run`` name the file they could not write, as every other command does. Python leaves
the name out of an error raised on an open file (a write, a flush at close), so it was "disk full"
alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import faultkit
import pytest

if TYPE_CHECKING:
    from conftest import Baton


@pytest.fixture
def full(tmp_path: Path, baton: Baton) -> Iterator[Path]:
    """A project with a plan and one record on a 256 KiB tmpfs filled to the last byte."""
    with faultkit.small_disk(tmp_path / "disk") as mount:
        project = mount / "project"
        (project / ".baton").mkdir(parents=True)
        (project / ".baton" / "plan.json").write_text(json.dumps({"steps": ["a", "b"]}))
        assert baton("record", "a", "running", "started", cwd=project).code == 0
        faultkit.fill(mount)
        yield project


def test_once_on_a_full_disk_names_the_file_and_runs_nothing(baton: Baton, full: Path) -> None:
    marker = full.parent / "ran"
    run = baton("once", "k1", "--", "sh", "-c", f"echo > {marker}", cwd=full)
    assert run.code == 2 and f"disk full: {full / '.baton'}/" in run.err, run.err
    assert not marker.exists()


def test_run_on_a_full_disk_names_the_file_and_starts_no_session(baton: Baton, full: Path, tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.write_text(f"#!/bin/sh\necho started > {tmp_path / 'started'}\n")
    claude.chmod(0o755)
    run = baton("run", "--claude", str(claude), cwd=full, timeout=60)
    assert run.code == 2 and f"disk full: {full / '.baton'}/" in run.err, run.err
    assert not (tmp_path / "started").exists()
