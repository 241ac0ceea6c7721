"""protect_branches through the hook, tested by doing: a real checkout whose origin is a local bare
repository; every form is sent to PreToolUse as Claude Code sends it (in process and as the
subprocess hooks.json starts); what passes is then run with bash, and the remote's protected
branches must not have moved. Each refused form that would really move one is also run anyway
(``bites``), and must move it: the refusal was not for nothing."""

from __future__ import annotations

from typing import Dict, List, NamedTuple

import pytest
from conftest import Hook, JobDir, Payloads
from gitrepo import Checkout

RULE = {"id": "main-reviewed", "protect_branches": ["main", "release/*"], "reason": "main is reviewed"}


class Form(NamedTuple):
    command: str
    refused: bool
    on: str = "feature"
    setup: str = ""  # run in the checkout first (configuration the form relies on)
    bites: bool = True  # refused: running it anyway moves a protected branch


R, P = True, False
REMOTE: List[Form] = [
    # refspecs naming a protected branch
    Form("git push origin HEAD:main", R),
    Form("git push origin feature:main", R),
    Form("git push origin +HEAD:main", R),
    Form("git push origin HEAD:refs/heads/main", R),
    Form("git push -f origin HEAD:main", R),
    Form("git push --force-with-lease origin HEAD:main", R),
    Form("git push origin main", R),
    Form("git push -u origin main", R),
    Form("git push origin HEAD:release/2", R),
    Form("git push origin feature:release/1", R),
    Form("git push origin :main", R),
    Form("git push --delete origin main", R),
    Form("git push -d origin release/1", R),
    Form("git push --all origin", R),
    Form("git push --mirror origin", R),
    Form("git push --prune origin 'refs/heads/*:refs/heads/*'", R, bites=False),
    Form("git send-pack ../remote.git refs/heads/feature:refs/heads/main", R),
    # no refspec: the current branch, its upstream, the configuration
    Form("git push", R, on="main"),
    Form("git push origin", R, on="main"),
    Form("git push origin HEAD", R, on="main"),
    Form("git checkout -q main && git push", R),
    Form("git switch -q main && git push origin HEAD", R),
    Form("git push origin", R, setup="git config remote.origin.push HEAD:main"),
    Form("git push", R, setup="git config push.default upstream && git branch -q -u origin/main"),
    Form("git push", R, setup="git config push.default matching"),
    # where git runs, and with what
    Form("git -C . push origin HEAD:main", R),
    Form("cd / && git -C {project} push origin HEAD:main", R),
    Form("git --git-dir=.git push origin HEAD:main", R),
    Form("GIT_DIR=.git git push origin HEAD:main", R),
    Form("env GIT_TRACE=0 git push origin HEAD:main", R),
    Form("git -c remote.origin.url=../remote.git push origin HEAD:main", R),
    Form("git pu origin HEAD:main", R, setup="git config alias.pu push"),
    Form("git sp origin HEAD:main", R, setup="git config alias.sp '!git push'"),
    # text games, wrappers, computed words
    Form("g''it push origin HEAD:main", R),
    Form("git p\\ush origin HEAD:main", R),
    Form("\"git\" push origin HEAD:main", R),
    Form("/usr/bin/git push origin HEAD:main", R),
    Form("sh -c 'git push origin HEAD:main'", R),
    Form("bash -c \"cd . && git push origin HEAD:main\"", R),
    Form("eval 'git push origin HEAD:main'", R),
    Form("nice -n 1 git push origin HEAD:main", R),
    Form("timeout 30 git push origin HEAD:main", R),
    Form("echo HEAD:main | xargs git push origin", R),
    Form("b=main; git push origin HEAD:$b", R),
    Form("git push origin \"HEAD:$(echo main)\"", R),
    Form("find . -maxdepth 0 -exec git push origin HEAD:main \\;", R),
    Form("git push origin HEAD:main 2>/dev/null || true", R),
    Form("git push origin feature; git push origin HEAD:main", R),
    Form("cmd=push; git $cmd origin HEAD:main", R),
    Form("$GIT push origin HEAD:main", R, bites=False),
    # GitHub
    Form("gh pr merge 1 --squash", R, bites=False),
    Form("gh api -X PATCH repos/o/r/git/refs/heads/main -f sha=abc", R, bites=False),
    Form("gh api repos/o/r/merges -f base=main -f head=feature", R, bites=False),
    # passing: other branches, tags, reads, dry runs, this repository only
    Form("git push origin feature", P),
    Form("git push origin HEAD", P),
    Form("git push", P),
    Form("git push -u origin feature", P),
    Form("git push origin feature:feature2", P),
    Form("git push origin HEAD:refs/heads/topic", P),
    Form("git push origin HEAD:release", P),
    Form("git push --dry-run origin HEAD:main", P),
    Form("git push origin v1", P, setup="git tag v1"),
    Form("git push origin refs/tags/v1", P, setup="git tag v1"),
    Form("git push origin feature && git status --short", P),
    Form("git push . HEAD:main", P),
    Form("git fetch origin", P),
    Form("git log origin/main..HEAD", P),
    Form("git status && git diff --stat", P),
    Form("git commit -qam five", P, setup="echo five > f.txt"),
    Form("git branch -f main HEAD", P),
    Form("echo git push origin HEAD:main", P),
    Form("gh api repos/o/r/pulls", P),
]
LOCAL: List[Form] = [
    Form("git commit -qam five", R, on="main", setup="echo five > f.txt"),
    Form("git commit -qam five", P, setup="echo five > f.txt"),
    Form("git checkout -q main && git commit -q --allow-empty -m x", R),
    Form("git merge -q feature", R, on="main"),
    Form("git reset -q --hard HEAD~1", R, on="main"),
    Form("git cherry-pick -X theirs feature", R, on="main"),
    Form("git rebase -q feature", R, on="main"),
    Form("git rebase -q feature main", R),
    Form("git branch -f main HEAD", R),
    Form("git push . HEAD:main", R),
    Form("git update-ref refs/heads/main HEAD", R),
    Form("git checkout -q -B main", R),
    Form("git fetch -q . feature:main", R),
    Form("git merge --abort", P, on="main", bites=False),
    Form("git stash list", P, on="main"),
    Form("git rebase -q main", P),
    Form("git push origin feature", P),
]


def bash(payload: Payloads, command: str) -> Dict[str, object]:
    return payload("pre_tool_use_bash", tool_input={"command": command, "description": "run"})


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Checkout:
    root = tmp_path_factory.mktemp("template")
    (root / "project").mkdir()
    return Checkout(root / "project", root / "remote.git", root).build()


def checkout(job: JobDir, form: Form, template: Checkout) -> Checkout:
    repo = template.copy_to(job.project, job.project.parent / "remote.git", job.home)
    if form.on != "feature":
        repo.checkout(form.on)
    if form.setup:
        assert repo.run(form.setup).returncode == 0
    return repo


def decide_and_run(form: Form, local: bool, hook: Hook, job: JobDir, payload: Payloads, template: Checkout) -> None:
    job.plan({"rules": [{**RULE, "local": local}], "steps": ["a"]})
    repo = checkout(job, form, template)
    command = form.command.replace("{project}", str(job.project))
    before_remote, before_main = repo.protected(repo.remote_refs()), repo.local_main()
    result = hook("PreToolUse", bash(payload, command))
    assert result.denied is form.refused, (command, result.reason)
    ran = repo.run(command)
    after_remote, after_main = repo.protected(repo.remote_refs()), repo.local_main()
    moved = after_remote != before_remote or (local and after_main != before_main)
    if not form.refused:
        assert not moved, (command, ran.stdout, ran.stderr)
        return
    assert "[baton:protect-branches]" in result.reason and "main-reviewed" in result.reason, result.reason
    if form.bites:  # the control: run anyway, the refused form really moves a protected branch
        assert moved, (command, "did not move a protected branch when run", ran.stdout, ran.stderr)


def test_the_tables_are_big_enough() -> None:
    assert sum(f.refused for f in REMOTE) >= 40 and sum(not f.refused for f in REMOTE) >= 15
    assert len({(f.command, f.on, f.setup) for f in REMOTE}) == len(REMOTE)


@pytest.mark.parametrize("form", REMOTE, ids=[f"{f.on}: {f.command}"[:70] for f in REMOTE])
def test_remote_forms(form: Form, hook: Hook, job: JobDir, payload: Payloads, template: Checkout) -> None:
    decide_and_run(form, False, hook, job, payload, template)


@pytest.mark.parametrize("form", LOCAL, ids=[f"{f.on}: {f.command}"[:70] for f in LOCAL])
def test_local_forms(form: Form, hook: Hook, job: JobDir, payload: Payloads, template: Checkout) -> None:
    decide_and_run(form, True, hook, job, payload, template)


def test_a_repository_that_cannot_be_read_is_refused(inproc: Hook, job: JobDir, payload: Payloads,
                                                     template: Checkout) -> None:
    job.plan({"rules": [RULE], "steps": ["a"]})
    template.copy_to(job.project, job.project.parent / "remote.git", job.home)
    with open(job.project / ".git" / "config", "a") as config:
        config.write("[remote \"broken\n")
    result = inproc("PreToolUse", bash(payload, "git push origin HEAD:feature"))
    assert result.denied and "cannot tell which branch would change" in result.reason, result.reason


def test_without_the_rule_pushes_are_not_read(inproc: Hook, job: JobDir, payload: Payloads) -> None:
    job.plan({"steps": ["a"]})
    assert not inproc("PreToolUse", bash(payload, "git push origin HEAD:main")).denied
