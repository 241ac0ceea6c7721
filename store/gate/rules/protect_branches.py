"""protect_branches: may this Bash command update a protected branch, on a remote or (``local``) here?

Reads every git and gh invocation the scan resolved (``store.shell``) and the repository it runs
in (``store.gate.repo``): a push's refspecs (``src:dst``, ``HEAD:main``, ``+main``, ``:main``,
``--delete``, ``--all``, ``--mirror``, ``--prune``), or with none, the configured push refspecs
or ``push.default`` applied to the current branch and its upstream; ``-C dir`` and
``--git-dir``; aliases from the repository's config; ``gh pr merge`` and ``gh api`` writes to
refs. With ``local: true`` also commit, merge, reset, rebase, cherry-pick, revert, am, pull and
branch rewrites while a protected branch is (or is made) current. Whatever cannot be told (a
computed word, an unknown repository, a command that may run anything) is refused.
"""

from __future__ import annotations

import os

from store.base import wild
from store.gate.call import refuse
from store.gate.gitargs import GitCall, Unreadable, git_calls
from store.gate.repo import RepoError
from store.plan.rules import of_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, List, Mapping, Optional, Sequence, Set

    from store.gate.call import Call
    from store.plan.plan import Plan
    from store.plan.rules import Rule
    from store.shell import Scan

LOCAL_WRITES = frozenset(("commit", "merge", "reset", "rebase", "cherry-pick", "revert", "am", "pull",
                          "filter-branch"))
NAMING = frozenset(("branch", "update-ref", "checkout", "switch", "fetch", "rebase", "push"))  # name the branch
_FINISHING = frozenset(("--abort", "--quit", "--skip", "--show-current-patch", "--edit-todo"))
_GH_REF_WRITES = ("git/refs", "/merges", "/merge", "/contents/", "/branches/", "merge-upstream", "graphql")


class Blocked(Exception):
    """This command updates (or may update) a protected branch: the message says how."""


def bash(call: Call, plan: Plan, command: str, scan: Scan, step: str) -> Optional[str]:
    """The refusal for a command that updates (or may update) a protected branch, or None."""
    return check(of_kind(plan.rules, "protect_branches"), scan, call.env)


def check(rules: Sequence[Rule], scan: Scan, env: Mapping[str, str]) -> Optional[str]:
    """None when no protect_branches rule is broken, else the refusal."""
    for rule in rules:
        try:
            _check_rule(rule, scan, env)
        except Blocked as why:
            return refuse("protect-branches", f"baton denied this command: {why}, and the job's rule {rule.name} "
                                              f"protects {', '.join(rule.branches)}: {rule.reason}. Push to another "
                                              "branch and let a person merge it.")
        except RepoError as exc:
            return refuse("protect-branches", f"baton denied this command: the job's rule {rule.name} protects "
                                              f"{', '.join(rule.branches)}, and {exc}, so it cannot tell which "
                                              "branch would change.")
    return None


def _check_rule(rule: Rule, scan: Scan, env: Mapping[str, str]) -> None:
    git_env = sorted(name for name in scan.assigned if name.startswith("GIT_") or name in ("HOME", "XDG_CONFIG_HOME"))
    calls = [inv for inv in scan.invocations if inv.program is None or _is_git(inv.program) or inv.program == "gh"]
    if not calls:
        return
    if git_env:
        raise Blocked(f"it sets {git_env[0]}, so baton cannot tell which repository or configuration git uses")
    switched: Set[Optional[str]] = set()
    parsed: List[GitCall] = []
    try:
        for inv in calls:
            if inv.program is None:
                raise Blocked("it runs a command baton cannot read (the command name or the code is computed)")
            for call in git_calls(inv, env):
                parsed.append(call)
                switched.update(call.switches())
        for call in parsed:
            _check_call(rule, call, switched)
    except Unreadable as why:
        raise Blocked(str(why)) from None


def _is_git(program: str) -> bool:
    base = os.path.basename(program)
    return base == "git" or base.startswith("git-")


def protected(rule: Rule, ref: Optional[str]) -> bool:
    """``ref`` (a branch name, ``refs/heads/x``, ``heads/x``) matches a protected glob; None: unknown."""
    if ref is None:
        return True
    names = {ref, ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref,
             ref[len("heads/"):] if ref.startswith("heads/") else ref}
    if ref.startswith("refs/") and not ref.startswith("refs/heads/"):
        return False  # tags, notes, review refs (refs/for/main) are not branches
    return any(wild.fnmatchcase(name, glob) for name in names for glob in rule.branches)


def _current(call: GitCall, switched: Iterable[Optional[str]]) -> Set[Optional[str]]:
    """The branches that may be current when ``call`` runs: the repository's, and any checked out before."""
    repo = call.repo()
    return ({repo.branch} if repo.exists else set()) | set(switched)


def _check_call(rule: Rule, call: GitCall, switched: Set[Optional[str]]) -> None:
    if call.program == "gh":
        _check_gh(rule, call)
    elif call.sub in ("push", "send-pack"):
        _check_push(rule, call, switched)
    elif rule.local:
        _check_local(rule, call, switched)


def _check_push(rule: Rule, call: GitCall, switched: Set[Optional[str]]) -> None:
    push = call.push()
    if push.dry_run:
        return
    if push.mirror:
        raise Blocked("`git push --mirror` makes the remote match this repository, protected branches included")
    if push.prune:
        raise Blocked("`git push --prune` deletes remote branches that have no local counterpart")
    if push.submodules:
        raise Blocked("`git push --recurse-submodules=on-demand` also pushes the submodules' branches")
    if push.remote == "." and not rule.local:
        return  # updates this repository's own branches
    repo = call.repo()
    currents = _current(call, switched)
    for dst in push.destinations(repo, currents):
        if protected(rule, dst):
            where = "this repository" if push.remote == "." else f"the remote {push.remote or '(default)'}"
            shown = "a branch it cannot name" if dst is None else dst
            raise Blocked(f"`{call.shown}` would update {shown} on {where}")


def _check_local(rule: Rule, call: GitCall, switched: Set[Optional[str]]) -> None:
    if call.sub not in LOCAL_WRITES and call.sub not in NAMING:
        return  # reads the repository only when a command may move a branch
    for name in call.local_targets(_current(call, switched) if call.sub == "branch" else set()):
        if protected(rule, name):
            raise Blocked(f"`{call.shown}` changes the branch {name or 'that baton cannot name'}")
    if call.sub in LOCAL_WRITES and not (set(call.words) & _FINISHING):
        for branch in _current(call, switched):
            if protected(rule, branch):
                shown = "a branch baton cannot tell" if branch is None else f"{branch}, the current branch,"
                raise Blocked(f"`{call.shown}` changes {shown}")


def _check_gh(rule: Rule, call: GitCall) -> None:
    words = call.words
    if None in words:
        raise Blocked(f"`{call.shown}` has a computed argument")
    head = [w for w in words if w and not w.startswith("-")][:2]
    if head[:2] == ["pr", "merge"]:
        raise Blocked("`gh pr merge` merges into the pull request's base branch, which the command does not name")
    if head[:2] == ["repo", "sync"]:
        branch = call.option_value("-b", "--branch")
        if branch is None or protected(rule, branch):
            raise Blocked(f"`{call.shown}` updates {branch or 'the default branch'} of a repository on GitHub")
    if head[:1] == ["api"] and call.gh_writes():
        endpoint = next((w for w in words[1:] if w and not w.startswith("-") and "/" in w), "")
        if any(part in endpoint.lower() for part in _GH_REF_WRITES):
            names = [seg for seg in endpoint.split("/") if seg]
            if endpoint.startswith(("repos/", "/repos/")) and "git/refs" in endpoint:
                ref = endpoint.split("git/refs/", 1)[1] if "git/refs/" in endpoint else None
                if ref is not None and not protected(rule, ref):
                    return
            hit = next((n for n in names if protected(rule, n)), None)
            raise Blocked(f"`{call.shown}` writes to {'the branch ' + hit if hit else 'a branch it does not name'} "
                          "through the GitHub API")

