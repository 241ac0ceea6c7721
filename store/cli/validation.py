"""Running a step's ``validate`` command before it may be recorded ``done``."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SECONDS = 600
TAIL = 200


@dataclass(frozen=True)
class Outcome:
    ok: bool
    summary: str  # "" when ok; else exit code and the tail of the output, one line
    seconds: float = 0.0


def run(command: str, cwd: Path, seconds: float = DEFAULT_SECONDS) -> Outcome:
    """Run ``command`` through the shell in the project root; stdout and stderr merged."""
    started = time.monotonic()
    try:
        proc = subprocess.run(command, shell=True, cwd=str(cwd), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=seconds)
    except subprocess.TimeoutExpired:
        return Outcome(False, f"validate timed out after {seconds:g}s: {command}")
    except OSError as exc:
        return Outcome(False, f"validate could not start: {exc}")
    seconds = round(time.monotonic() - started, 3)
    if proc.returncode == 0:
        return Outcome(True, "", seconds)
    output = " ".join(proc.stdout.decode("utf-8", "replace").split())
    if not output:
        return Outcome(False, f"validate failed (exit {proc.returncode}, no output)", seconds)
    tail = output[-TAIL:] if len(output) > TAIL else output
    return Outcome(False, f"validate failed (exit {proc.returncode}): {tail}", seconds)
