"""No orphan outlives a session: a subreaper adopts what a dead session left and :func:`sweep` ends
it (SIGTERM, then SIGKILL for one that ignores it). Run in a child interpreter, since becoming a
subreaper is for the life of the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
SUPERVISOR = """
import json, os, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from store.run import orphans
adopting = orphans.become_subreaper()
# a session that starts a long command in a process group of its own, then dies (as Claude Code does)
deaf = "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n" if sys.argv[2] == "stubborn" else ""
body = "import signal, time\\n" + deaf + "time.sleep(300)"
starter = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', sys.argv[1]], "
           "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
orphan = int(subprocess.run([sys.executable, "-c", starter, body], capture_output=True, text=True).stdout)
time.sleep(0.2)
adopted = orphan in orphans.children(os.getpid())
ended = orphans.sweep(grace=0.5)
try:
    os.kill(orphan, 0)
    alive = True
except ProcessLookupError:
    alive = False
print(json.dumps({"adopting": adopting, "orphan": orphan, "adopted": adopted, "ended": ended, "alive": alive,
                  "left": orphans.children(os.getpid())}))
"""


def supervise(kind: str) -> Dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", SUPERVISOR, str(REPO), kind], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("kind", ["polite", "stubborn"])
def test_an_orphan_of_a_dead_session_is_adopted_and_ended(kind: str) -> None:
    seen = supervise(kind)
    assert seen["adopting"] and seen["adopted"]
    assert seen["ended"] == [seen["orphan"]]
    assert not seen["alive"] and seen["left"] == []


def test_children_are_read_from_proc() -> None:
    from store.run.orphans import children

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in children(os.getpid())
        assert os.getpid() not in children(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert child.pid not in children(os.getpid())
