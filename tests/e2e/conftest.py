"""Fixtures for end-to-end tests that drive the real Claude Code CLI.

Every test collected under tests/e2e gets the `e2e` marker (deselect with `-m "not e2e"`).
A missing CLI is a failure, not a skip: `dev/install-claude-code` installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .driver import PINNED_VERSION, REPO, Claude, ClaudeMissing, find_claude
from .fakeapi import FakeAPI

HERE = Path(__file__).resolve().parent
PLUGIN_PARTS = (".claude-plugin", "hooks", "commands", "bin", "store")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end test running the real Claude Code CLI")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_exe() -> Path:
    """The CLI executable; fails the test with install instructions when it is missing."""
    try:
        exe = find_claude()
    except ClaudeMissing as err:
        missing = str(err)
    else:
        missing = ""
    if missing:
        pytest.fail(missing, pytrace=False)
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=60
    ).stdout
    expected = os.environ.get("BATON_CLAUDE_VERSION") or PINNED_VERSION  # another version, on purpose
    if f"{expected} " not in version:
        pytest.fail(
            f"{exe} reports {version.strip()!r}, expected {expected}; "
            "run `dev/install-claude-code` (or point BATON_CLAUDE at the pinned CLI; "
            "BATON_CLAUDE_VERSION names another version on purpose, see docs/development.md).",
            pytrace=False,
        )
    return exe


@pytest.fixture
def fake_api() -> Iterator[FakeAPI]:
    """A started FakeAPI with an empty script; set `fake_api.script` before running the CLI."""
    api = FakeAPI().start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory for the CLI to run in."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def claude(claude_exe: Path, fake_api: FakeAPI, tmp_path: Path) -> Iterator[Claude]:
    """A driver for the CLI with a throwaway HOME, talking to `fake_api`.

    Whatever its runs left alive (a killed CLI's hooks, background Bash jobs, a leftover a wrapper
    put in a session of its own) is killed after the test, and the test errs if any outlives that.
    """
    driver = Claude(claude_exe, fake_api.base_url, tmp_path / "home")
    try:
        yield driver
    finally:
        left = driver.kill_all()
    assert left == [], f"processes of this test outlived it: {left}"


@pytest.fixture
def plugin_copy(tmp_path: Path) -> Path:
    """The plugin's files copied into a folder with a different name than the repository's."""
    dest = tmp_path / "relay-plugin-copy"
    dest.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in PLUGIN_PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, dest / part, ignore=ignore)
    return dest
