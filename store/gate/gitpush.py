"""A ``git push`` (or ``send-pack``) read as git reads it: where it goes and which remote branches
it updates, from its refspecs or, with none, from the repository's configuration (``remote.<name>.push``,
``remote.<name>.mirror``, ``push.default``) applied to the branches that may be current."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Protocol, Set, Tuple

    from store.gate.repo import Repo

    class GitCall(Protocol):
        """What a push reads of its invocation (``store.gate.gitargs.GitCall``)."""

        words: List[Optional[str]]

        def flags(self) -> Set[str]: ...

        def operands(self, valued: Tuple[str, ...] = ()) -> List[Optional[str]]: ...

        def option_value(self, *names: str) -> Optional[str]: ...

_PUSH_VALUED = ("--repo", "-o", "--push-option", "--receive-pack", "--exec", "--recurse-submodules")


class Push:
    """A ``git push`` (or ``send-pack``): where it goes and which remote branches it updates."""

    def __init__(self, call: GitCall) -> None:
        words = [str(w) for w in call.words]
        flags = call.flags()
        self.call = call
        self.dry_run = bool(flags & {"-n", "--dry-run"})
        self.mirror = "--mirror" in flags
        self.all = bool(flags & {"--all", "--branches"})
        self.prune = "--prune" in flags
        self.delete = bool(flags & {"-d", "--delete"})
        self.submodules = any(w.startswith("--recurse-submodules=") and w.split("=", 1)[1] in ("on-demand", "only")
                              for w in words)
        operands = [str(w) for w in call.operands(_PUSH_VALUED)]
        repo = call.option_value("--repo")
        self.remote = repo or (operands[0] if operands else None)
        self.refspecs = operands if repo else operands[1:]

    def destinations(self, repo: Repo, currents: Set[Optional[str]]) -> List[Optional[str]]:
        """The remote branch names the push may update (None: one it cannot name)."""
        if self.all:
            return list(repo.branches())
        specs = [s for s in self.refspecs if s != "tag"]
        if self.delete:
            return [s.lstrip("+").split(":")[-1] for s in specs]
        if not specs:
            name = self.remote or repo.push_remote(next(iter(currents), None) if len(currents) == 1 else None)
            if repo.last(f"remote.{name}.mirror") == "true":
                return [None]
            specs = list(repo.get(f"remote.{name}.push"))
            if not specs:
                return self._default(repo, currents)
        out: List[Optional[str]] = []
        for spec in specs:
            src, colon, dst = spec.lstrip("+").partition(":")
            if not colon:
                dst = src
            if dst in ("HEAD", "@"):
                out.extend(currents)
            elif "*" in dst:
                out.append(None)
            elif colon or not any(c in src for c in "~^@{"):
                out.append(dst)
        return out

    def _default(self, repo: Repo, currents: Set[Optional[str]]) -> List[Optional[str]]:
        mode = (repo.last("push.default") or "simple").lower()
        if mode == "nothing":
            return []
        if mode == "matching":
            return list(repo.branches())
        out: List[Optional[str]] = []
        for branch in currents:
            out.append(branch)
            if branch is not None and mode in ("simple", "upstream", "tracking"):
                out.append(repo.upstream(branch))
        return [b for b in out if b is not None] if None not in currents else out
