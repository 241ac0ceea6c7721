"""One run per job: the lock is refused to a second holder with the first one's pid, and it goes
away with its process, however that process ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from store.base.errors import BatonError
from store.run.lock import BUSY, RunLock

REPO = Path(__file__).resolve().parents[2]
HOLD = ("import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
        "from store.run.lock import RunLock\n"
        "with RunLock(Path(sys.argv[2])):\n    print('held', flush=True); time.sleep(60)")


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    with RunLock(path):
        assert path.read_text().split()[0] == str(os.getpid())
        with pytest.raises(BatonError) as refused, RunLock(path):
            pass
        assert refused.value.code == BUSY == 7
        assert f"another baton run is already running this job (pid {os.getpid()}, started 20" in refused.value.message
        assert f"kill -TERM {os.getpid()}" in refused.value.message
    assert path.read_text() == ""
    with RunLock(path):  # free again
        pass


def test_the_lock_dies_with_a_killed_holder(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(REPO), str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(BatonError, match=f"pid {holder.pid},"), RunLock(path):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with RunLock(path):  # the stale pid in the file does not matter: the flock went with the process
        pass
