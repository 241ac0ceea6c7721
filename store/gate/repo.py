"""What a git repository says about itself: current branch, upstreams, remotes and their URLs, aliases.

Read with the system's git (an absolute path, never a ``git`` found on PATH) running plumbing
that runs no hook and no fsmonitor: ``config --list``, ``symbolic-ref`` and ``for-each-ref``,
with ``core.fsmonitor=false`` and ``core.hooksPath=/dev/null`` for good measure. Reading config
runs nothing, so the system config stays in (a push honours its ``insteadOf`` rewrites too).
A repository that cannot be read raises :class:`RepoError` (the caller refuses: fail closed);
a folder that is not a repository reads as one with no branch and no remotes.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Tuple

GIT_PATHS = ("/usr/bin/git", "/usr/local/bin/git", "/bin/git", "/opt/homebrew/bin/git", "/usr/local/git/bin/git")
SECONDS = 5
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false")
_CACHE: Dict[Tuple[str, str], Repo] = {}


class RepoError(Exception):
    """The repository could not be read (no git, a timeout, an error other than "not a repository")."""


def system_git() -> str:
    for path in GIT_PATHS:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise RepoError("no git program in the system folders (" + ", ".join(GIT_PATHS[:3]) + ")")


def open_repo(directory: str, git_dir: str = "", env: Optional[Mapping[str, str]] = None) -> Repo:
    """The repository git would use in ``directory`` (with ``--git-dir`` when given); cached per process."""
    key = (directory, git_dir)
    if key not in _CACHE:
        _CACHE[key] = Repo(directory, git_dir, env)
    return _CACHE[key]


class Repo:
    """One repository's branch and configuration, read once."""

    def __init__(self, directory: str, git_dir: str = "", env: Optional[Mapping[str, str]] = None) -> None:
        self.directory, self.git_dir = directory, git_dir
        self.env = dict(os.environ if env is None else env)
        self.env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
        self.exists = os.path.isdir(directory)
        self.config: Dict[str, List[str]] = self._config() if self.exists else {}
        head = self._git("symbolic-ref", "-q", "HEAD") if self.exists else ""
        self.branch: Optional[str] = head[len("refs/heads/"):] if head.startswith("refs/heads/") else None
        self._branches: Optional[List[str]] = None

    def _git(self, *args: str) -> str:
        import subprocess  # only rules that read a repository need it

        argv = [system_git(), *_SAFE, "-C", self.directory]
        argv += [f"--git-dir={self.git_dir}"] if self.git_dir else []
        try:
            proc = subprocess.run([*argv, *args], capture_output=True, env=self.env, timeout=SECONDS,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RepoError(f"git took more than {SECONDS} s to read {self.directory}") from None
        except OSError as exc:
            raise RepoError(f"git could not run: {exc}") from None
        err = proc.stderr.decode("utf-8", "replace")
        if proc.returncode and "not a git repository" in err.lower():
            self.exists = False
            return ""
        if proc.returncode and not (args[0] == "symbolic-ref" and proc.returncode == 1):
            if args[0] == "config" and proc.returncode == 1 and not err.strip():
                return ""  # no configuration at all
            raise RepoError(f"git cannot read {self.directory}: {' '.join(err.split())[:200]}")
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def _config(self) -> Dict[str, List[str]]:
        out: Dict[str, List[str]] = {}
        raw = self._git("config", "--list", "--null")
        for entry in raw.split("\0"):
            key, _, value = entry.partition("\n")
            if key:
                out.setdefault(_normal_key(key), []).append(value)
        return out

    def get(self, key: str) -> List[str]:
        return self.config.get(_normal_key(key), [])

    def last(self, key: str) -> Optional[str]:
        values = self.get(key)
        return values[-1] if values else None

    def branches(self) -> List[str]:
        """Local branch names."""
        if self._branches is None:
            text = self._git("for-each-ref", "--format=%(refname)", "refs/heads/") if self.exists else ""
            self._branches = [line[len("refs/heads/"):] for line in text.splitlines() if line.startswith("refs/heads/")]
        return self._branches

    def upstream(self, branch: str) -> Optional[str]:
        """The branch ``branch`` tracks on its remote (``branch.<name>.merge``), as a short name."""
        merge = self.last(f"branch.{branch}.merge")
        return merge[len("refs/heads/"):] if merge and merge.startswith("refs/heads/") else merge

    def push_remote(self, branch: Optional[str]) -> str:
        """Where a ``git push`` without a repository goes from ``branch``."""
        found = self.last(f"branch.{branch}.pushremote") if branch else None
        found = found or self.last("remote.pushdefault")
        found = found or (self.last(f"branch.{branch}.remote") if branch else None)
        return found or "origin"

    def fetch_remote(self, branch: Optional[str]) -> str:
        return (self.last(f"branch.{branch}.remote") if branch else None) or "origin"

    def remote_urls(self, name: str, push: bool) -> List[str]:
        """The URLs git contacts for the remote (or URL) ``name``, after ``insteadOf`` rewriting."""
        urls = self.get(f"remote.{name}.url")
        if push and self.get(f"remote.{name}.pushurl"):
            return self.get(f"remote.{name}.pushurl")  # pushurl is not rewritten by insteadOf
        return [self.rewrite(url, push) for url in (urls or [name])]

    def rewrite(self, url: str, push: bool) -> str:
        """``url.<base>.insteadOf`` (and ``pushInsteadOf`` for a push): the longest match wins."""
        best, base = "", ""
        for key, values in self.config.items():
            if not key.startswith("url.") or not key.endswith((".insteadof", ".pushinsteadof")):
                continue
            if key.endswith(".pushinsteadof") and not push:
                continue
            for prefix in values:
                if url.startswith(prefix) and len(prefix) > len(best):
                    best, base = prefix, key[4 : key.rindex(".")]
        return base + url[len(best):] if best else url

    def alias(self, name: str) -> Optional[str]:
        return self.last(f"alias.{name}")


def _normal_key(key: str) -> str:
    """git's key rules: section and variable names are case-insensitive, a subsection is not."""
    section, _, rest = key.partition(".")
    sub, dot, var = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{var.lower()}" if dot else f"{section.lower()}.{rest.lower()}"
