"""Issue 25 item 9: file-store leases do not depend on the workers' clocks agreeing. Workers run
``baton claim`` under libfaketime (Debian's ``faketime``), their clocks 20 minutes ahead of or
behind the machine's, in one project: a worker ahead must not take a live worker's fresh step, a
worker behind must not make its own lease look expired, and a lease that really went quiet is still
claimable whatever the claimer's clock says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import faultkit
import pytest

FAKETIME = shutil.which("faketime")
pytestmark = pytest.mark.skipif(FAKETIME is None, reason="needs libfaketime (Debian's faketime; dev/test installs it)")


def _plan(project: Path, lease_minutes: float) -> None:
    (project / ".baton").mkdir(exist_ok=True)
    steps = [{"id": name, "needs": []} for name in ("a", "b", "c")]
    (project / ".baton" / "plan.json").write_text(json.dumps({"limits": {"lease_minutes": lease_minutes},
                                                              "steps": steps}))


def _claim(project: Path, worker: str, shift: str = "") -> subprocess.CompletedProcess[str]:
    """``baton claim`` as ``worker``, its clock moved by ``shift`` (``"+20m"``) when given."""
    command: Sequence[str] = [sys.executable, str(faultkit.REPO / "bin" / "baton"), "claim"]
    if shift:
        command = [str(FAKETIME), "-f", shift, *command]
    env = {**os.environ, "BATON_WORKER": worker, "BATON_FSYNC": "0"}
    return subprocess.run(list(command), cwd=str(project), env=env, capture_output=True, text=True, timeout=60)


def _holders(project: Path) -> dict:
    lines = (project / ".baton" / "steps.jsonl").read_text().splitlines()
    return {r["step"]: r.get("worker") for r in map(json.loads, lines) if r["status"] == "claim"}


def test_a_worker_ahead_or_behind_takes_no_live_step_and_loses_none(tmp_path: Path) -> None:
    _plan(tmp_path, lease_minutes=5)
    assert _claim(tmp_path, "now").stdout.strip() == "worker now claimed a"
    ahead = _claim(tmp_path, "ahead", "+20m")  # a's lease is seconds old, though 20 minutes by this clock
    assert ahead.returncode == 0 and ahead.stdout.strip() == "worker ahead claimed b", ahead
    behind = _claim(tmp_path, "behind", "-20m")  # its claim's ledger time is 20 minutes in the past
    assert behind.returncode == 0 and behind.stdout.strip() == "worker behind claimed c", behind
    late = _claim(tmp_path, "late")
    assert late.returncode == 1 and "3 held by other workers" in late.stdout, late
    again = _claim(tmp_path, "late2", "+20m")
    assert again.returncode == 1 and "3 held by other workers" in again.stdout, again
    assert _holders(tmp_path) == {"a": "now", "b": "ahead", "c": "behind"}


def test_a_lease_that_went_quiet_is_claimable_whatever_the_claimers_clock(tmp_path: Path) -> None:
    _plan(tmp_path, lease_minutes=0.05)  # 3 s
    assert _claim(tmp_path, "quiet", "+20m").returncode == 0  # its claim is stamped 20 minutes ahead
    time.sleep(4)
    taken = _claim(tmp_path, "behind", "-20m")  # by its own clock, a was claimed 40 minutes from now
    assert taken.returncode == 0 and taken.stdout.strip() == "worker behind claimed a", taken
