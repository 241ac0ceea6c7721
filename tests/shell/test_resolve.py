"""Resolved commands: the simple commands bash would run, after quotes, escapes, wrappers and paths.

Rules that name a program (``deny_bash``, ``protect_branches``, ``allow_hosts``) read these, never
the text: ``g''it p\\ush`` is ``git push``. A word known only at run time is ``None``; code that
cannot be read at all (``eval "$X"``, ``sh -c "$X"``, a computed command name) is an invocation
whose program is ``None``, listed in ``unresolved`` as well.
"""

from __future__ import annotations

from typing import List

import pytest
from spec import Row, check, ids, runs

from store.shell import analyse

GIT_PUSH = ("git", "push")

TEXT_GAMES: List[Row] = [
    ("git push", runs(GIT_PUSH)),
    ("g''it push", runs(GIT_PUSH)),
    ("git p\\ush", runs(GIT_PUSH)),
    ('"git" push', runs(GIT_PUSH)),
    ("'git' 'push'", runs(GIT_PUSH)),
    ("$'\\x67it' push", runs(GIT_PUSH)),
    ("g\\\nit push", runs(GIT_PUSH)),
    ("/usr/bin/git push", runs(GIT_PUSH)),
    ("/bin/git push", runs(GIT_PUSH)),
    ("git  push\torigin   main", runs(("git", "push", "origin", "main"))),
    ("git push origin HEAD:main", runs(("git", "push", "origin", "HEAD:main"))),
    ("git -C sub push", runs(("git", "-C", "sub", "push"))),
]
WRAPPERS: List[Row] = [
    ("command git push", runs(("command", "git", "push"), GIT_PUSH)),
    ("builtin command git push", runs(GIT_PUSH)),
    ("exec git push", runs(GIT_PUSH)),
    ("env X=1 git push", runs(("env", "X=1", "git", "push"), GIT_PUSH)),
    ("env -i git push", runs(GIT_PUSH)),
    ("sudo -u bob git push", runs(GIT_PUSH)),
    ("sudo -E git push", runs(GIT_PUSH)),
    ("nice -n 5 git push", runs(GIT_PUSH)),
    ("timeout 30 git push", runs(GIT_PUSH)),
    ("timeout -s KILL 30 git push", runs(GIT_PUSH)),
    ("setsid git push", runs(GIT_PUSH)),
    ("time git push", runs(GIT_PUSH)),
    ("time -p git push", runs(GIT_PUSH)),
    ("nohup git push", runs(GIT_PUSH)),
    ("stdbuf -oL git push", runs(GIT_PUSH)),
    ("ionice -c3 git push", runs(GIT_PUSH)),
    ("sudo nice timeout 5 git push", runs(GIT_PUSH)),
    ("X=1 git push", runs(GIT_PUSH)),
    ("jobs -x git push", runs(GIT_PUSH)),
    ("trap 'git push' EXIT", runs(GIT_PUSH)),
]
NESTED_CODE: List[Row] = [
    ("sh -c 'git push'", runs(("sh", "-c", "git push"), GIT_PUSH)),
    ("bash -lc \"git push origin main\"", runs(("git", "push", "origin", "main"))),
    ("bash -c 'cd sub && git push'", runs(GIT_PUSH)),
    ("eval 'git push'", runs(GIT_PUSH)),
    ("eval git push", runs(GIT_PUSH)),
    ("echo $(git push)", runs(GIT_PUSH, ("echo", None))),
    ("x=`git push`", runs(GIT_PUSH)),
    ("(git push)", runs(GIT_PUSH)),
    ("{ git push; }", runs(GIT_PUSH)),
    ("if true; then git push; fi", runs(GIT_PUSH)),
    ("ls && git push || true", runs(("ls",), GIT_PUSH)),
    ("git status\ngit push", runs(("git", "status"), GIT_PUSH)),
    ("f() { git push; }; f", runs(("f",), GIT_PUSH)),
    ("git() { command git \"$@\"; }; git push", runs(GIT_PUSH, ("git", None))),
    ("cat <<EOF\n$(git push)\nEOF", runs(GIT_PUSH)),
    ("diff <(git push) x", runs(GIT_PUSH)),
]
RUN_TIME_WORDS: List[Row] = [
    ("xargs git", runs(("xargs", "git"), ("git", None))),
    ("echo push | xargs git", runs(("git", None))),
    ("xargs -I{} git {} origin", runs(("git", None, "origin", None))),
    ("find . -exec git push {} \\;", runs(("git", "push", None))),
    ("find . -execdir git push \\;", runs(GIT_PUSH)),
    ("cmd=push; git $cmd", runs(("git", None))),
    ("for c in push; do git $c; done", runs(("git", None))),
    ("git push origin \"$(git branch --show-current)\"", runs(("git", "push", "origin", None))),
    ("$CMD push", runs((None, "push"))),
    ("\"$(echo git)\" push", runs((None, "push"))),
    ("`echo git` push", runs((None, "push"))),
    ("{g,}it push", runs((None, "push"))),
    ("/usr/bin/gi? push", runs((None, "push"))),
    ("eval \"$X\"", runs((None,))),
    ("sh -c \"$X\"", runs((None,))),
    ("echo 'git push' | sh", runs((None,))),
    ("bash <<'EOF'\ngit push\nEOF", runs((None,))),
    ("trap \"$X\" EXIT", runs((None,))),
    ("echo hi | mapfile -C \"$X\" -c 1", runs((None,))),
    ("exec 3<>/dev/tcp/evil.example/80", runs(("/dev/tcp", "evil.example", "80"))),
    ("cat < /dev/udp/10.0.0.1/53", runs(("/dev/udp", "10.0.0.1", "53"))),
    ("cat < \"$f\"", runs(("/dev/tcp", None))),
]
TABLE = TEXT_GAMES + WRAPPERS + NESTED_CODE + RUN_TIME_WORDS


def test_each_command_appears_once() -> None:
    assert len({command for command, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize("command,verdict", TABLE, ids=ids(TABLE))
def test_resolve(command: str, verdict: object) -> None:
    check(command, verdict)  # type: ignore[arg-type]


@pytest.mark.parametrize("command,reason", [
    ("eval \"$X\"", "eval runs computed code"),
    ("sh -c \"$X\"", "sh -c runs computed code"),
    ("$CMD push", "the command name is computed: $CMD"),
    ("echo 'git push' | sh", "sh reads commands from standard input"),
    ("trap \"$X\" EXIT", "trap runs computed code: \"$X\""),
])
def test_what_cannot_be_resolved_says_why(command: str, reason: str) -> None:
    assert reason in analyse(command, "/p", "/h").unresolved


@pytest.mark.parametrize("command,runner", [
    ("python3 -c 'import os'", True), ("./deploy.sh", True), ("make", True), ("frob x", True),
    ("bash script.sh", True), ("ls", False), ("git push", False), ("curl https://x", False),
])
def test_runners_are_programs_running_code_the_scan_cannot_read(command: str, runner: bool) -> None:
    assert analyse(command, "/p", "/h").invocations[0].runner is runner


def test_invocations_carry_the_directories_they_run_in() -> None:
    result = analyse("cd sub && git push; (cd /abs && git push); cd $D && git push", "/p", "/h")
    pushes = [inv.cwds for inv in result.invocations if inv.argv == GIT_PUSH]
    assert pushes == [("/p/sub",), ("/abs",), (None,)]


def test_assignments_are_listed() -> None:
    assert analyse("GIT_DIR=x git push; export A=1; read B; for C in 1; do :; done", "/p", "/h").assigned == (
        "GIT_DIR", "A", "B", "C")
