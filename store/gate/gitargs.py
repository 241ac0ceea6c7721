"""A git (or gh) invocation read as git reads it: global options, the repository, the subcommand
after aliases, and the arguments of push, fetch and the branch-changing subcommands.

``git_calls(invocation, env)`` turns one invocation the shell scan resolved into one
:class:`GitCall` per directory it may run in (``cd`` and ``-C`` followed, ``--git-dir`` kept).
Anything that cannot be read (a computed word, an unknown directory, ``-c`` changing remotes, a
shell alias, a subcommand git does not have) raises :class:`Unreadable`.
"""

from __future__ import annotations

import os
import shlex

from store.gate.repo import open_repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Set, Tuple

    from store.gate.gitpush import Push
    from store.gate.repo import Repo
    from store.shell import Invocation

# every command of git 2.39 (``git --list-cmds=main,nohelpers``), for telling an alias or an extension
KNOWN = frozenset(
    """add am annotate apply archimport archive bisect blame branch bugreport bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone
    column commit commit-graph commit-tree config count-objects credential credential-cache credential-store
    cvsexportcommit cvsimport cvsserver daemon describe diagnose diff diff-files diff-index diff-tree difftool
    fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch
    fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep gui hash-object help hook http-backend
    http-fetch http-push imap-send index-pack init init-db instaweb interpret-trailers log ls-files ls-remote
    ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file
    merge-ours merge-recursive merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv
    name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport
    range-diff read-tree rebase receive-pack reflog remote repack replace request-pull rerere reset restore
    rev-list rev-parse revert rm scalar send-email send-pack shortlog show show-branch show-index show-ref
    sparse-checkout stage stash status stripspace submodule svn switch symbolic-ref tag unpack-file
    unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit
    verify-pack verify-tag version web--browse whatchanged worktree write-tree""".split()
)
_VALUED_GLOBAL = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
                  "--exec-path", "--list-cmds")
_FLAG_GLOBAL = frozenset(("-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--no-lazy-fetch",
                          "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
                          "--no-optional-locks", "--no-advice", "--html-path", "--man-path", "--info-path",
                          "--version", "--help"))
_CONFIG_FAMILIES = ("remote.", "url.", "push.", "branch.", "alias.", "include", "core.sshcommand", "core.gitproxy",
                    "http.proxy", "protocol.")


class Unreadable(Exception):
    """What the invocation does to branches or remotes cannot be told from its text."""


def git_calls(inv: Invocation, env: Mapping[str, str]) -> List[GitCall]:
    program = os.path.basename(inv.program or "")
    if None in inv.cwds:
        raise Unreadable(f"`{shown(inv.argv)}` runs in a folder baton cannot tell")
    calls = []
    for cwd in inv.cwds:
        calls.append(GitCall(inv, str(cwd), env, program))
    return calls


def shown(argv: Tuple[Optional[str], ...]) -> str:
    return " ".join("<computed>" if w is None else w for w in argv)[:120]


class GitCall:
    """One git or gh invocation in one directory."""

    def __init__(self, inv: Invocation, cwd: str, env: Mapping[str, str], program: str) -> None:
        self.inv, self.env = inv, env
        self.shown = shown(inv.argv)
        self.directory, self.git_dir = cwd, ""
        self.program = "gh" if program == "gh" else "git"
        words = list(inv.argv[1:])
        if self.program == "gh":
            self.sub, self.words = None, words
            return
        if program.startswith("git-"):
            words = [program[4:], *words]
        words = self._globals(words)
        self.sub, self.words = self._subcommand(words)

    def _globals(self, words: List[Optional[str]]) -> List[Optional[str]]:
        k = 0
        while k < len(words):
            word = words[k]
            if word is None:
                raise Unreadable(f"`{self.shown}` has a computed option")
            if not word.startswith("-"):
                break
            name, eq, value = word.partition("=")
            k += 1
            if name in _VALUED_GLOBAL and not eq:
                if k >= len(words) or words[k] is None:
                    raise Unreadable(f"`{self.shown}` has a computed {name} value")
                value, k = str(words[k]), k + 1
            elif name not in _VALUED_GLOBAL and word not in _FLAG_GLOBAL:
                raise Unreadable(f"`{self.shown}` has an option baton does not know: {word}")
            self._global(name, value)
        return words[k:]

    def _global(self, name: str, value: str) -> None:
        if name == "-C":
            self.directory = os.path.normpath(os.path.join(self.directory, os.path.expanduser(value)))
        elif name == "--git-dir":
            self.git_dir = os.path.normpath(os.path.join(self.directory, value))
        elif name == "-c" and value.lower().startswith(_CONFIG_FAMILIES):
            raise Unreadable(f"`{self.shown}` sets {value.split('=', 1)[0]}, which changes where git pushes")
        elif name in ("--namespace", "--config-env", "--exec-path", "--super-prefix"):
            raise Unreadable(f"`{self.shown}` uses {name}, which baton does not follow")

    def _subcommand(self, words: List[Optional[str]]) -> Tuple[Optional[str], List[Optional[str]]]:
        for _ in range(8):
            if not words:
                return None, []
            sub = words[0]
            if sub is None:
                raise Unreadable(f"`{self.shown}` has a computed subcommand")
            if sub in KNOWN:
                return sub, words[1:]
            alias = self.repo().alias(sub)
            if alias is None:
                raise Unreadable(f"`git {sub}` is not a git command or an alias baton can read")
            if alias.startswith("!"):
                raise Unreadable(f"`git {sub}` is a shell alias ({alias[:60]})")
            try:
                words = [*shlex.split(alias), *words[1:]]
            except ValueError:
                raise Unreadable(f"`git {sub}` is an alias baton cannot read") from None
        raise Unreadable(f"`{self.shown}` expands aliases too deep")

    def repo(self) -> Repo:
        return open_repo(self.directory, self.git_dir, self.env)

    def operands(self, valued: Tuple[str, ...] = ()) -> List[Optional[str]]:
        """Words that are not options (an option in ``valued`` takes the next word as its value)."""
        out: List[Optional[str]] = []
        k = 0
        while k < len(self.words):
            word = self.words[k]
            k += 1
            if word == "--":
                return out + self.words[k:]
            if word is not None and word.startswith("-") and word != "-":
                if word in valued:
                    k += 1
                continue
            out.append(word)
        return out

    def option_value(self, *names: str) -> Optional[str]:
        for k, word in enumerate(self.words):
            for name in names:
                if word == name and k + 1 < len(self.words):
                    return self.words[k + 1]
                if word is not None and word.startswith(name + "=") and name.startswith("--"):
                    return word[len(name) + 1 :]
        return None

    def flags(self) -> Set[str]:
        out = set()
        for word in self.words:
            if word is not None and word.startswith("--"):
                out.add(word.split("=", 1)[0])
            elif word is not None and word.startswith("-") and len(word) > 1:
                out.update("-" + c for c in word[1:])
        return out

    def switches(self) -> Set[Optional[str]]:
        """The branches this call may make current (checkout, switch)."""
        if self.sub not in ("checkout", "switch") or None in self.words:
            return {None} if self.sub in ("checkout", "switch") else set()
        for option in ("-b", "-B", "-c", "-C", "--orphan", "--create", "--force-create"):
            value = self.option_value(option)
            if value is not None:
                return {value}
        if "--detach" in self.words or "--" in self.words[:1]:
            return set()
        names = self.operands(("--conflict",))
        return {None if names[0] == "-" else names[0]} if names else set()

    def push(self) -> Push:
        if None in self.words:
            raise Unreadable(f"`{self.shown}` has a computed argument")
        from store.gate.gitpush import Push

        return Push(self)

    def local_targets(self, currents: Set[Optional[str]]) -> List[Optional[str]]:
        """Branches a local command names as the ones it changes (branch -f/-m/-d, update-ref,
        checkout -B, fetch X:Y, rebase BASE BRANCH); None in the list: one it cannot name."""
        if None in self.words:
            return [None]
        flags = self.flags()
        names: List[Optional[str]] = [w for w in self.operands() if w is not None]
        if self.sub == "branch" and flags & {"-f", "--force", "-m", "-M", "-c", "-C", "-d", "-D", "--delete",
                                             "--move", "--copy"}:
            renames_current = flags & {"-m", "-M", "-c", "-C", "--move", "--copy"} and len(names) < 2
            return [*names, *(currents if renames_current else ())]
        if self.sub == "update-ref":
            return [None] if "--stdin" in self.words else names[:1]
        if self.sub in ("checkout", "switch"):
            return [v for v in (self.option_value(o) for o in ("-B", "-C", "--force-create")) if v is not None]
        if self.sub == "fetch":
            return [str(spec).lstrip("+").split(":", 1)[1] for spec in names[1:] if ":" in str(spec)]
        if self.sub == "rebase" and len(names) >= 2 and not flags & {"--onto"}:
            return names[1:2]
        return []

    def gh_writes(self) -> bool:
        method = (self.option_value("-X", "--method") or "").upper()
        fields = {"-f", "-F", "--field", "--raw-field", "--input"} & {w.split("=", 1)[0] for w in self.words if w}
        return method not in ("", "GET", "HEAD") or (not method and bool(fields))
