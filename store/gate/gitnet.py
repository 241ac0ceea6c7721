"""Where a git command connects: the remote URLs of push, fetch, pull, clone, ls-remote and the rest.

A named remote is resolved from the repository's config (``remote.<name>.url``, ``pushurl``
for a push, ``url.<base>.insteadOf``/``pushInsteadOf``); with no remote named, the current
branch's push or fetch remote, else ``origin``. Submodule URLs come from ``.gitmodules`` and
the config. A transport helper (``ext::``, ``fd::``, ``name::url``) runs a program, so its
destination is unknown; a local path or ``file://`` is not the network.
"""

from __future__ import annotations

import os

from store.base import bounded
from store.gate.urls import LOCAL, scp_host, url_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

    from store.gate.gitargs import GitCall
    from store.gate.repo import Repo

    Dest = Tuple[Optional[str], str]

_VALUED = ("-o", "--origin", "-b", "--branch", "-c", "--config", "--depth", "--reference", "--template",
           "--separate-git-dir", "--jobs", "-j", "--filter", "--server-option", "--upload-pack", "-u", "--repo",
           "--push-option", "--receive-pack", "--exec", "--shallow-since", "--shallow-exclude", "--refmap",
           "--negotiation-tip", "--recurse-submodules-default", "--deepen", "--strategy", "-s", "-X",
           "--strategy-option")


def classify(url: str, what: str) -> Dest:
    """One remote address: its host, LOCAL, or None for a transport helper."""
    if "::" in url and "://" not in url.split("::", 1)[0]:
        return None, f"{what}: {url[:60]!r} goes through a transport helper, which runs a program"
    if url.startswith("file://"):
        return LOCAL, what
    host = scp_host(url) if "://" not in url else url_host(url)
    return (None, f"{what}: cannot tell the host of {url[:60]!r}") if host is None else (host, what)


def remote(repo: Repo, name: str, push: bool, what: str) -> List[Dest]:
    """The destinations of a remote given by name, URL or path."""
    if "://" in name or "::" in name or name.startswith(("/", ".", "~")) or (":" in name and "/" not in name[:1]):
        return [classify(name, what)]
    return [classify(url, f"{what} ({name})") for url in repo.remote_urls(name, push)]


def git_destinations(call: GitCall) -> List[Dest]:
    repo, sub = call.repo(), call.sub
    ops = [str(w) for w in call.operands(_VALUED)]
    flags = call.flags()
    what = f"git {sub}"
    if flags & {"--upload-pack", "--receive-pack", "--exec"} or ("-u" in flags and sub in ("clone", "ls-remote")):
        return [(None, f"{what} runs a program on the remote side that may be anything")]
    if sub in ("push", "send-pack"):
        name = call.option_value("--repo") or (ops[0] if ops else repo.push_remote(repo.branch))
        return remote(repo, name, True, what)
    if sub in ("fetch", "pull"):
        names = _all_remotes(repo) if "--all" in flags else ops if "--multiple" in flags else \
            [ops[0] if ops else repo.fetch_remote(repo.branch)]
        found = [d for name in names for d in remote(repo, name, False, what)]
        return found + (_submodules(repo, what) if "--no-recurse-submodules" not in flags else [])
    if sub == "clone":
        found = [classify(ops[0], what)] if ops else []
        return found + ([(None, "git clone --recurse-submodules fetches URLs from the cloned repository")]
                        if "--recurse-submodules" in flags or "--recursive" in flags else [])
    if sub == "ls-remote":
        return remote(repo, ops[0] if ops else repo.fetch_remote(repo.branch), False, what)
    if sub == "remote":
        return _remote_sub(repo, ops, flags, what)
    if sub == "archive":
        target = call.option_value("--remote")
        return remote(repo, target, False, what) if target else []
    if sub == "submodule" and ops[:1] and ops[0] in ("update", "sync", "add"):
        return [classify(ops[1], what)] if ops[0] == "add" and len(ops) > 1 else _submodules(repo, what)
    if sub == "request-pull" and len(ops) > 1:
        return remote(repo, ops[1], False, what)
    if sub == "send-email":
        return [(None, "git send-email sends mail through a server baton does not read")]
    if sub == "fetch-pack" and ops:
        return [classify(ops[0], what)]
    return []


def _remote_sub(repo: Repo, ops: List[str], flags: set[str], what: str) -> List[Dest]:
    action = ops[0] if ops else ""
    if action in ("show", "prune") and "-n" not in flags:
        return [d for name in ops[1:] for d in remote(repo, name, False, f"{what} {action}")]
    if action == "update":
        names = ops[1:] or _all_remotes(repo)
        return [d for name in names for d in remote(repo, name, False, f"{what} update")]
    return []


def _all_remotes(repo: Repo) -> List[str]:
    names = []
    for key in repo.config:
        if key.startswith("remote.") and key.endswith(".url"):
            names.append(key[len("remote."):-len(".url")])
    return names


def _submodules(repo: Repo, what: str) -> List[Dest]:
    """Submodule URLs (``.gitmodules`` and ``submodule.*.url``), contacted by a recursive fetch."""
    urls = [v for k, values in repo.config.items() if k.startswith("submodule.") and k.endswith(".url")
            for v in values]
    gitmodules = os.path.join(repo.directory, ".gitmodules")
    if os.path.isfile(gitmodules):
        try:
            text = bounded.read_regular(gitmodules, 1_000_000).decode("utf-8", "replace")
        except (OSError, bounded.Unreadable):
            return [(None, f"{what}: cannot read .gitmodules")]
        for line in text.splitlines():
            key, eq, value = line.strip().partition("=")
            if eq and key.strip().lower() == "url":
                urls.append(value.strip().strip('"'))
    out: List[Dest] = []
    for url in urls:  # a relative URL is relative to the superproject's own remote
        out.extend(remote(repo, repo.fetch_remote(repo.branch), False, what) if url.startswith(("./", "../"))
                   else [classify(url, f"{what} (submodule)")])
    return out
