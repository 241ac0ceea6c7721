"""Whether the sandbox can run here: the real probe, its cache (per bwrap file, kernel and user, for a
day), and the answers when bubblewrap is missing or fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from store.sandbox import probe


def env(home: Path) -> dict:  # type: ignore[type-arg]
    return {"HOME": str(home)}


def test_bubblewrap_runs_here_with_no_capability_left(tmp_path: Path) -> None:
    found = probe.bubblewrap(env(tmp_path), fresh=True)
    assert found.ok and found.bwrap in probe.BWRAP_PATHS, found.why  # dev/test installs bubblewrap
    cached = json.loads(Path(probe.cache_path(env(tmp_path))).read_text())
    assert cached["ok"] is True and cached["key"] == probe.cache_key(found.bwrap)


def test_the_cached_answer_is_used_until_bwrap_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bwrap = probe.find_bwrap()
    assert bwrap
    probe.save(env(tmp_path), probe.cache_key(bwrap), __import__("time").time(), probe.Probe(False, bwrap, "cached"))
    assert probe.bubblewrap(env(tmp_path)).why == "cached"
    monkeypatch.setattr(probe, "cache_key", lambda path: "another bwrap")
    assert probe.bubblewrap(env(tmp_path)).ok, "a different bwrap (or kernel) probes again"
    probe.forget(env(tmp_path))
    assert not os.path.exists(probe.cache_path(env(tmp_path)))


def test_an_old_cached_answer_is_probed_again(tmp_path: Path) -> None:
    bwrap = probe.find_bwrap()
    assert bwrap
    probe.save(env(tmp_path), probe.cache_key(bwrap), 0.0, probe.Probe(False, bwrap, "stale"))
    assert probe.bubblewrap(env(tmp_path)).ok


def test_no_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "BWRAP_PATHS", (str(tmp_path / "none"),))
    monkeypatch.setattr(probe, "find_bwrap", lambda candidates=None: None)
    found = probe.bubblewrap(env(tmp_path))
    assert not found.ok and found.why == "bubblewrap (bwrap) is not installed"


def test_a_bwrap_that_cannot_make_namespaces_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    found = probe.run_probe(str(fake))
    assert not found.ok and found.why == "bwrap: Creating new namespace failed: Operation not permitted"


def test_a_bwrap_that_leaves_capabilities_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho ok; echo 'CapEff:\t000001ffffffffff'\n")
    fake.chmod(0o755)
    found = probe.run_probe(str(fake))
    assert not found.ok and "capabilities" in found.why
