"""A real git checkout with a local bare repository as its ``origin``, for the protect_branches tests.

``origin`` holds ``main``, ``release/1`` and ``feature``; the checkout has ``main`` one commit
ahead of ``origin/main`` (so pushing it would change the remote), tracks ``origin/main`` and
``origin/feature``, and starts on ``feature``. Commands run with bash in the checkout, as the
Bash tool would run them, with a git identity and no system or global git configuration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Mapping

GIT = shutil.which("git") or "git"


def git_env(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid", GIT_TERMINAL_PROMPT="0")
    return env


class Checkout:
    def __init__(self, project: Path, remote: Path, home: Path) -> None:
        self.project, self.remote, self.env = project, remote, git_env(home)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        proc = subprocess.run([GIT, *args], cwd=str(cwd or self.project), env=self.env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout.strip()

    def build(self) -> Checkout:
        self.git("init", "-q", "--bare", "-b", "main", str(self.remote), cwd=self.remote.parent)
        self.git("config", "receive.denyDeleteCurrent", "ignore", cwd=self.remote)
        self.git("init", "-q", "-b", "main")
        (self.project / "f.txt").write_text("one\n")
        self.git("add", "f.txt")
        self.git("commit", "-qm", "one")
        self.git("remote", "add", "origin", os.path.relpath(self.remote, self.project))
        self.git("push", "-q", "-u", "origin", "main")
        self.git("push", "-q", "origin", "main:release/1")
        self.commit("two")  # main is now ahead of origin/main
        self.git("checkout", "-qb", "feature")
        self.commit("three")
        self.git("push", "-q", "-u", "origin", "feature")
        self.commit("four")  # feature is ahead too
        return self

    def copy_to(self, project: Path, remote: Path, home: Path) -> Checkout:
        """A copy of this checkout and its remote, side by side as here (the remote's URL is relative)."""
        assert os.path.relpath(remote, project) == os.path.relpath(self.remote, self.project)
        shutil.copytree(self.project / ".git", project / ".git", symlinks=True)
        shutil.copy2(self.project / "f.txt", project / "f.txt")
        shutil.copytree(self.remote, remote, symlinks=True)
        return Checkout(project, remote, home)

    def commit(self, text: str) -> None:
        (self.project / "f.txt").write_text(text + "\n")
        self.git("commit", "-qam", text)

    def checkout(self, branch: str) -> None:
        self.git("checkout", "-q", branch)

    def remote_refs(self) -> Dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)", cwd=self.remote)
        return dict(line.split(" ", 1) for line in out.splitlines())

    def protected(self, refs: Mapping[str, str]) -> Dict[str, str]:
        return {k: v for k, v in refs.items() if k == "refs/heads/main" or k.startswith("refs/heads/release/")}

    def local_main(self) -> str:
        return self.git("rev-parse", "refs/heads/main")

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """``command`` as the Bash tool runs it: bash, in the checkout, stdin closed."""
        return subprocess.run(["bash", "-c", command], cwd=str(self.project), env=self.env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
