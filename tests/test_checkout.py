"""A checkout stays clean: what the test set-up makes in it (the .cache link of dev/cache-dir) is
ignored by git, so `git status` after the tests shows only the changes a person made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict

import pytest

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository holding this checkout's .gitignore and dev/cache-dir, committed."""
    repo = tmp_path / "baton"
    (repo / "dev").mkdir(parents=True)
    shutil.copy2(ROOT / ".gitignore", repo / ".gitignore")
    shutil.copy2(ROOT / "dev" / "cache-dir", repo / "dev" / "cache-dir")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return repo


def cache_env(tmp_path: Path) -> Dict[str, str]:
    return dict(os.environ, BATON_DEV_CACHE=str(tmp_path / "user-cache"))


def test_the_cache_link_the_test_set_up_makes_leaves_git_status_clean(checkout: Path, tmp_path: Path) -> None:
    made = subprocess.run([str(checkout / "dev" / "cache-dir")], env=cache_env(tmp_path),
                          capture_output=True, text=True, check=True)
    assert (checkout / ".cache").is_symlink()
    assert Path(made.stdout.strip()) == (tmp_path / "user-cache").resolve()
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize("kind", ["link", "folder"])
@pytest.mark.parametrize("where", [".cache", "tests/.cache"])
def test_a_cache_link_or_folder_is_ignored(checkout: Path, tmp_path: Path, where: str, kind: str) -> None:
    """Tools make a .cache folder, or a link to one, in the folder they run in."""
    path = checkout / where
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        path.symlink_to(tmp_path / "user-cache", target_is_directory=True)
    else:
        path.mkdir()
        (path / "venv").write_text("x")
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    (checkout / "tests" / "new.py").parent.mkdir(exist_ok=True)
    (checkout / "tests" / "new.py").write_text("")
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == "?? tests/new.py\n"
