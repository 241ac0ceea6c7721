"""Running a step's ``validate`` command before it may be recorded ``done``: in baton's sandbox where
one can run (the command runs tests the model wrote), with what it left outside the step undone."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Tuple, Union

    from store.sandbox.bwrap_args import Policy

DEFAULT_SECONDS = 600
TAIL = 200


@dataclass(frozen=True)
class Outcome:
    ok: bool
    summary: str  # "" when ok; else exit code and the tail of the output, one line
    seconds: float = 0.0


def run(command: str, cwd: Path, seconds: float = DEFAULT_SECONDS, sandbox: Optional[Tuple[str, Policy]] = None
        ) -> Outcome:
    """Run ``command`` through the shell in the project root, in ``sandbox`` (bwrap, policy) when
    given; stdout and stderr merged."""
    argv: Union[str, List[str]] = command
    built = None
    if sandbox is not None:
        from store.sandbox.bwrap_args import build

        built = build(sandbox[1])
        argv = [*built.launch([sandbox[0]]), *built.args, "--chdir", str(cwd), "--", "/bin/sh", "-c", command]
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, shell=built is None, cwd=str(cwd), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=seconds)
    except subprocess.TimeoutExpired:
        return Outcome(False, f"validate timed out after {seconds:g}s: {command}")
    except OSError as exc:
        return Outcome(False, f"validate could not start: {exc}")
    finally:
        if built is not None and sandbox is not None:
            from store.sandbox.afterrun import check

            check(built.after_check(sandbox[1]))
            if built.work:
                from store.sandbox.scratch import release

                release(built.work)
            from store.sandbox.afterrun import tidy

            tidy(sandbox[1].state_dir)
    seconds = round(time.monotonic() - started, 3)
    if proc.returncode == 0:
        return Outcome(True, "", seconds)
    output = " ".join(proc.stdout.decode("utf-8", "replace").split())
    if not output:
        return Outcome(False, f"validate failed (exit {proc.returncode}, no output)", seconds)
    tail = output[-TAIL:] if len(output) > TAIL else output
    return Outcome(False, f"validate failed (exit {proc.returncode}): {tail}", seconds)
