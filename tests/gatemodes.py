"""The two modes the gate runs in, for tests: sandboxed (bubblewrap, the normal case here, since
`dev/test` installs it) and the fallback where no sandbox can run, forced the way a machine
without one would be seen: a failed probe in the person's probe cache (not writable from inside the
sandbox). ``sandboxed_here()`` fails loudly when bubblewrap is missing, so a test meant to run
sandboxed never passes in the fallback by mistake."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Dict

import pytest

from store.sandbox import probe

MODES = ("sandboxed", "fallback")


def env_for(home: Path) -> Dict[str, str]:
    return {"HOME": str(home)}


def force_fallback(home: Path, why: str = "bubblewrap is unavailable in this test") -> None:
    """Make every hook run with ``HOME=home`` see no usable sandbox."""
    bwrap = probe.find_bwrap() or probe.BWRAP_PATHS[0]
    key = probe.cache_key(bwrap) if os.path.exists(bwrap) else "missing"
    probe.save(env_for(home), key, time.time(), probe.Probe(False, bwrap, why))


def sandboxed_here(home: Path) -> None:
    """Fail (not skip) unless bubblewrap runs the sandbox with ``HOME=home``."""
    found = probe.bubblewrap(env_for(home), fresh=True)
    if not found.ok:
        pytest.fail(f"baton's sandbox cannot run here ({found.why}); `dev/test` installs bubblewrap", pytrace=False)


def set_mode(mode: str, home: Path) -> None:
    if mode == "fallback":
        force_fallback(home)
    else:
        sandboxed_here(home)
