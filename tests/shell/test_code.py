"""Code that runs where a reader does not look: each family, with the verdict the scan must reach.

Families (each a table below): commands that looked read-only but run code; arithmetic and
subscript evaluation; shell state the command changes (variables programs read, options,
functions, aliases); links made inside one command; test runners and their output options;
interpreters and programs. In every attack row the code is ``touch pwned``: the executed test
at the end runs each attack with bash in a scratch folder and checks that ``pwned`` appears, so
a row that stops biting (a form bash no longer runs) fails instead of passing for nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest
from spec import READ, Row, check, ids, opaque, writes

PWNED = "touch pwned"

# commands on an earlier read-only list, and options of listed tools, that run code
READ_LIST_RUNS: List[Row] = [
    (f"jobs -x {PWNED}", writes("pwned")),
    ("jobs -x rm -f .baton/steps.jsonl", writes(".baton/steps.jsonl")),
    (f"compgen -C '{PWNED}' x", opaque("compgen -C runs a command")),
    (f"f() {{ {PWNED}; }}; compgen -F f x", opaque("compgen -F runs a command")),
    (f"compgen -W '$({PWNED})' x", writes("pwned")),
    (f"echo hi | mapfile -C '{PWNED}' -c 1", opaque("mapfile -C runs a callback")),
    (f"readarray -C '{PWNED}' -c 1 < README.md", opaque("readarray -C runs a callback")),
    (f"trap -- '{PWNED}' EXIT", opaque("relative to an unknown directory: pwned")),
    (f"trap '{PWNED}' EXIT", opaque("relative to an unknown directory: pwned")),
    (f"trap 'cd /work/proj && {PWNED}' EXIT", writes("pwned")),
    ("trap \"$X\" EXIT", opaque("trap runs computed code")),
    (f"git ls-remote --upload-pack='{PWNED}' .", opaque("runs a program")),
    ("git ls-remote 'ext::sh -c touch% pwned'", opaque("runs a program")),
    ("git help -w log", opaque("opens a viewer program")),
    ("date -s '2020-01-01'", opaque("date -s sets the system clock")),
    ("hostname evil", opaque("sets the host name")),
    ("rg --pre 'sh -c touch' foo", opaque("rg --pre")),
    ("sort --compress-program=sh in", opaque("sort --compress-program")),
    ("less -o log f", writes("log")),
]

# a value evaluated as arithmetic, or used as a variable name, runs the $( ) of a subscript in it
ARITHMETIC: List[Row] = [
    (f"x='a[$({PWNED})]'; (( x ))", opaque("(( )) evaluates x")),
    (f"x='a[$({PWNED})]'; echo $((x))", opaque("$(( )) evaluates x")),
    (f"x='a[$({PWNED})]'; echo $[x]", opaque("evaluates x")),
    (f"x='a[$({PWNED})]'; (( ${{x}} ))", opaque("evaluates x")),
    (f"x='a[$({PWNED})]'; for ((i=x; i<1; i++)); do :; done", opaque("evaluates x")),
    (f"printf -v 'a[$({PWNED})]' x", opaque("evaluates quoted code as arithmetic")),
    (f"x='a[$({PWNED})]'; printf -v \"$x\" y", opaque("evaluates x")),
    (f"test -v 'a[$({PWNED})]'", opaque("test -v evaluates quoted code")),
    (f"[ -v 'a[$({PWNED})]' ]", opaque("[ -v evaluates quoted code")),
    (f"x='a[$({PWNED})]'; [ -v \"$x\" ]", opaque("evaluates x")),
    (f"x='a[$({PWNED})]'; [[ -v \"$x\" ]]", opaque("[[ -v ]] evaluates x")),
    (f"x='a[$({PWNED})]'; [[ $x -eq 0 ]]", opaque("[[ -eq ]] evaluates x")),
    (f"x='a[$({PWNED})]'; [[ 1 -lt x ]]", opaque("[[ -lt ]] evaluates x")),
    (f"read 'a[$({PWNED})]' <<< hi", opaque("evaluates quoted code as arithmetic")),
    (f"x='a[$({PWNED})]'; read \"$x\" <<< hi", opaque("evaluates x")),
    (f"declare 'a[$({PWNED})]=1'", opaque("evaluates quoted code")),
    (f"let 'a[$({PWNED})]=1'", opaque("evaluates quoted code")),
    (f"x='a[$({PWNED})]'; let y=x", opaque("evaluates x")),
    (f"x='a[$({PWNED})]'; declare -i y; y=$x", opaque("y is declared -i")),
    (f"declare -i y=0; x='a[$({PWNED})]'; y+=$x", opaque("y is declared -i")),
    (f"x='a[$({PWNED})]'; echo ${{!x}}", opaque("${!name} evaluates x")),
    (f"x='$({PWNED})'; echo ${{x@P}}", opaque("${name@P} evaluates x")),
    (f"x='a[$({PWNED})]'; echo ${{x:x}}", opaque("substring offset evaluates x")),
    (f"x='a[$({PWNED})]'; a=(1); echo ${{a[x]}}", opaque("subscript of a evaluates x")),
    (f"x='a[$({PWNED})]'; m[$x]=1", opaque("subscript of m evaluates x")),
    (f"x='a[$({PWNED})]'; : ${{y:=$x}}; echo $((y))", opaque("evaluates y")),
    (f"x='a[$({PWNED})]'; v=${{x}}; echo $((v))", opaque("evaluates v")),
    (f"x='a[$({PWNED})]'; f() {{ echo $(( $1 )); }}; f \"$x\"", opaque("evaluates $1")),
    (f"echo 'a[$({PWNED})]' > f; echo $(( $(cat f) ))", opaque("evaluates command output as arithmetic",
                                                                writes=["f"])),
    (f"echo 'a[$({PWNED})]' >/dev/null; : $(( _ ))", opaque("evaluates _")),
    (f"declare -a a='([0]=$({PWNED}))'", opaque("value in parentheses is evaluated as code")),
    (f"a=(); declare a='([0]=$({PWNED}))'", opaque("value in parentheses is evaluated as code")),
    (f"for x in 'a[$({PWNED})]'; do (( x )); done", opaque("evaluates x")),
    # values the command cannot set to code
    ("x=5; (( x > 3 )) && echo", READ),
    ("i=0; i=$((i + 1)); (( i ))", READ),
    ("n=${#HOME}; echo $((n * 2))", READ),
    ("(( HOME ))", READ),
    ("a=(1 2); echo ${a[1]} ${#a[@]}", READ),
    ("x=$(ls); [[ $x == *py ]]", READ),
    ("[ \"$x\" -eq 1 ]", READ),
]

# what the command changes about the shell, or about the programs it starts
SHELL_STATE: List[Row] = [
    ("export \"PATH=$PWD/src:$PATH\"; ls", opaque("assignment to PATH")),
    ("PATH=src ls", opaque("assignment to PATH")),
    ("read PATH < f; ls", opaque("assignment to PATH")),
    ("declare -n p=PWD", opaque("declare -n makes a name refer")),
    ("local -n r=x", opaque("local -n makes a name refer")),
    ("unset PWD; : ${PWD:=/tmp}", opaque("assignment to PWD")),
    ("shopt -s cdable_vars; cd x", opaque("shopt cdable_vars")),
    ("shopt -s expand_aliases", opaque("shopt expand_aliases")),
    ("export 'PS4=$(touch pwned)'; set -x; :", opaque("assignment to PS4")),
    ("BASH_ENV=src/x.sh bash -c :", opaque("assignment to BASH_ENV")),
    ("env BASH_ENV=src/x.sh bash -c :", opaque("assignment to BASH_ENV")),
    (f"GIT_CONFIG_PARAMETERS=\"'core.fsmonitor={PWNED}'\" git status", opaque("assignment to GIT_CONFIG_PARAMETERS")),
    (f"git -c core.fsmonitor='{PWNED}' status", opaque("git -c may run programs")),
    ("git --config-env=core.pager=X log", opaque("git --config-env may run programs")),
    ("XDG_CONFIG_HOME=src git status", opaque("assignment to XDG_CONFIG_HOME")),
    ("LESSOPEN='|sh -c id' less f", opaque("assignment to LESSOPEN")),
    ("TAR_OPTIONS=--to-command=sh tar -xOf a.tgz", opaque("assignment to TAR_OPTIONS")),
    ("RIPGREP_CONFIG_PATH=src/rc rg x", opaque("assignment to RIPGREP_CONFIG_PATH")),
    ("PROMPT_COMMAND=x ls", opaque("assignment to PROMPT_COMMAND")),
    ("http_proxy=http://evil curl https://x", opaque("assignment to http_proxy")),
    ("set -k; git status GIT_DIR=x", opaque("set -k changes how commands run")),
    ("set -P; cd a/..", opaque("set -P changes how commands run")),
    ("set -o posix", opaque("set -o posix changes how commands run")),
    (f"shopt -s expand_aliases; alias ls='{PWNED}'\nls", opaque("shopt expand_aliases")),
    ("alias ls='rm -rf src'", opaque("unknown command 'alias'")),
    ("enable -n echo", opaque("unknown command 'enable'")),
    ("hash -p ./x ls", opaque("hash -p")),
    # functions: a name may run a body defined elsewhere in the command
    (f"for i in 1 2; do ls; ls() {{ {PWNED}; }}; done", writes("pwned")),
    (f"ls() {{ {PWNED}; }}; ls", writes("pwned")),
    (f"echo() {{ {PWNED}; }}; echo hi", writes("pwned")),
    (f"if true; then ls() {{ {PWNED}; }}; fi; ls", writes("pwned")),
    (f"trap 'ls' EXIT; ls() {{ cd /work/proj && {PWNED}; }}", writes("pwned")),
    ("rm() { :; } | cat; rm -f x", writes("x")),
    ("x=$(rm() { :; }); rm -f x", writes("x")),
    ("rm() { :; }; command rm -f x", writes("x")),
    ("rm() { :; }; unset -f rm; rm -f x", writes("x")),
    ("if false; then deploy() { :; }; fi; deploy", opaque("unknown command 'deploy'")),
    ("deploy() { ls; }; deploy", READ),
]

# links: a path below an entry the command makes a link, or moves, cannot be resolved beforehand
LINKS: List[Row] = [
    ("cd src/a/b && ln -s ../.. l && mv l .. && echo x >> ../l/.baton/steps.jsonl",
     writes("src/a/b/l", "src/a/b/../..", "src/a/b/..", "src/a/b/../l", "src/a/b/../l/.baton/steps.jsonl",
            links=["src/a/b/l", "src/a/b/../l"])),
    ("mkdir d && ln -s ../../.baton d/x && echo x > d/x/steps.jsonl",
     writes("d", "d/x", "../../.baton", "d/../../.baton", "d/x/steps.jsonl", links=["d/x"])),
    ("ln -s ../.baton src/l && echo x >> src/l/steps.jsonl",
     writes("src/l", "../.baton", "src/../.baton", "src/l/steps.jsonl", links=["src/l"])),
    ("ln .baton/steps.jsonl src/notes.txt", writes("src/notes.txt", ".baton/steps.jsonl", links=["src/notes.txt"])),
    ("ln .bat*/steps.jsonl src/notes.txt", opaque("uses a glob", writes=["src/notes.txt"])),
    ("cp -a src/l src/new && echo x > src/new/f", writes("src/new", "src/new/f", links=["src/new"])),
    ("cp src/a src/b", writes("src/b")),
    ("mv src/x src/y", writes("src/y", "src/x", links=["src/y"])),
]

# test runners run the tests' code; the files their options name are written
TEST_RUNNERS: List[Row] = [
    ("pytest --junitxml=.bat''on/steps.jsonl", opaque("pytest", writes=[".baton/steps.jsonl"])),
    ("pytest --junit-xml .baton/plan.json", opaque("pytest", writes=[".baton/plan.json"])),
    ("pytest --basetemp=.baton", opaque("pytest", writes=[".baton"])),
    ("pytest -o cache_dir=.baton/c", opaque("pytest", writes=[".baton/c"])),
    ("pytest --rootdir=/tmp/r", opaque("pytest", writes=["/tmp/r/.pytest_cache"])),
    ("pytest --cov=src --cov-report=xml:.baton/cov.xml", opaque("pytest", writes=[".baton/cov.xml"])),
    ("python3 -m pytest --junitxml=report.xml -q", opaque("pytest", writes=["report.xml"])),
    ("pytest --debug=.baton/log", opaque("pytest", writes=[".baton/log"])),
    ("pytest -q tests/", opaque("runs a program that may write files")),
]
PROGRAMS: List[Row] = [
    ('python3 x.py', opaque("python3 runs a script 'x.py'")),
    ('python3.11 -m pytest -q', opaque('python3.11 -m pytest runs a program that may write files')),
    ('python3 --version', READ),
    ('pytest -q', opaque('pytest runs a program that may write files')),
    ("node -e 'x'", opaque('node -e runs inline code')),
    ('node --version', READ),
    ('ruby x.rb', opaque("ruby runs a script 'x.rb'")),
    ("php -r 'x'", opaque('php -r runs inline code')),
    ('bash script.sh', opaque("bash runs a script 'script.sh'")),
    ('sh', opaque('sh reads commands from standard input')),
    ('sh -c "$X"', opaque('sh has a computed argument: "$X"')),
    ("sh -c 'rm a; touch b'", writes('a', 'b')),
    ("bash -lc 'rm -f a'", writes('a')),
    ("bash -c 'cd .baton && echo > x'; echo > y", writes('.baton/x', 'y')),
    ("fish -c 'echo'", opaque('fish -c runs inline code')),
    ('source venv/bin/activate', opaque("source runs a script 'venv/bin/activate'")),
    ('. ./env.sh', opaque(". runs a script './env.sh'")),
    ('eval $X', opaque('eval has a computed argument: $X')),
    ('make test', opaque('make test runs a program that may write files')),
    ('npm test', opaque('npm test runs a program that may write files')),
    ('npx foo', opaque('npx foo runs a program that may write files')),
    ('pip install x', opaque('pip install runs a program that may write files')),
    ('pip list', READ),
    ("trap 'rm -f /tmp/lock' EXIT", writes('/tmp/lock')),
    ("trap 'rm -f lock' EXIT", opaque('write target is relative to an unknown directory: lock')),
    ('frob x', opaque("unknown command 'frob'")),
    ('./run.sh', opaque("runs a local program './run.sh'")),
    ('bin/tool x', opaque("runs a local program 'bin/tool'")),
    ('/usr/bin/rm f', writes('f')),
    ('alias ls=rm', opaque("unknown command 'alias'")),
    ('PATH=/tmp:$PATH ls', opaque('assignment to PATH changes how commands run')),
    ('export PATH=$PATH:/x', opaque('assignment to PATH changes how commands run')),
    ('HOME=/tmp ls', opaque('assignment to HOME changes how commands run')),
    ('LD_PRELOAD=x.so ls', opaque('assignment to LD_PRELOAD changes how commands run')),
    ('for PATH in /x; do ls; done', opaque('assignment to PATH changes how commands run')),
    ('FOO=1 ls && export BAR=2', READ),
    ('shopt -s lastpipe', opaque('shopt lastpipe changes how commands run')),
]
TABLE = READ_LIST_RUNS + ARITHMETIC + SHELL_STATE + LINKS + TEST_RUNNERS + PROGRAMS


def test_each_command_appears_once() -> None:
    assert len({command for command, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize("command,verdict", TABLE, ids=ids(TABLE))
def test_code(command: str, verdict: object) -> None:
    check(command, verdict)  # type: ignore[arg-type]


ATTACKS = [command for command, _ in TABLE if PWNED in command]


def test_every_family_has_attacks() -> None:
    assert len(ATTACKS) >= 50


@pytest.mark.parametrize("command", ATTACKS, ids=[repr(c)[:60] for c in ATTACKS])
def test_each_attack_runs_code_when_bash_runs_it(command: str, tmp_path: Path) -> None:
    """The control for the rows above: run by bash as written, each attack does run its code."""
    scratch = tmp_path / "proj"
    scratch.mkdir()
    for name in ("README.md", "f", "in"):
        (scratch / name).write_text("x\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LC_ALL": "C",
           "GIT_ALLOW_PROTOCOL": "ext:file", "GIT_CONFIG_NOSYSTEM": "1"}
    git = shutil.which("git")
    if git is not None:
        subprocess.run([git, "init", "-q", str(scratch)], check=True, env=env)
    subprocess.run(["bash", "-c", command.replace("/work/proj", str(scratch))], cwd=scratch, env=env,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert (scratch / "pwned").exists(), f"{command!r} did not run its code under bash"
