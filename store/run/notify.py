"""``--notify CMD``: a command of the person's choosing, run when a run ends without them.

It runs through the shell (it is the person's own command line) with the outcome in its environment:
``BATON_OUTCOME`` (done, approval, limit, idle, api), ``BATON_EXIT_CODE``, ``BATON_MESSAGE`` (one
line), ``BATON_NEXT`` (the step id, empty when done), ``BATON_JOB`` and ``BATON_PROJECT``. Its output
goes to stderr, so it never mixes into ``--json``; a failure is reported, never fatal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from store.base.text import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Mapping, Optional

TIMEOUT = 60.0


def run(command: str, env: Mapping[str, str], facts: Mapping[str, str], timeout: float = TIMEOUT) -> Optional[int]:
    """Run ``command``; its exit code, or None when it could not run or timed out."""
    full: Dict[str, str] = dict(env)
    full.update({f"BATON_{k.upper()}": one_line(v, 1000) for k, v in facts.items()})
    try:
        proc = subprocess.Popen(command, shell=True, env=full, stdin=subprocess.DEVNULL, stdout=2, stderr=2,
                                start_new_session=True)
    except OSError:
        return None
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # the shell and whatever it started
        proc.wait()
        return None
