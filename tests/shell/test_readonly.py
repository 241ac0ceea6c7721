"""Read-only: the commands baton lets run while a step may only read, and the list behind them.

A command is read-only when every simple command in it is on the read-only list (or is a
builtin, git subcommand or tool option known to change nothing), writes nothing but the
terminal, /dev/null and file descriptors, and evaluates no value the command itself set. The
list holds only programs with no way to write a file or run other code, whatever their
arguments (``store.shell.known.PURE``); the commands that looked harmless but are not
(``jobs -x``, ``compgen -C``, ``test -v``, ``set -k`` ...) are specified in ``test_code.py``.
"""

from __future__ import annotations

import pytest
from spec import READ, check

from store.shell.known import PURE

# the list itself: adding a program means auditing it (options, environment) and adding it here
AUDITED = set(
    """ls cat head tail more grep egrep fgrep zgrep wc echo pwd which type whereis stat du df cmp comm cut tr
    paste column fold nl jq printenv true false basename dirname realpath readlink md5sum sha1sum sha224sum
    sha256sum sha384sum sha512sum b2sum cksum sum od hexdump strings id whoami uname ps sleep seq yes : tac rev
    expand unexpand fmt pr join expr nproc arch tty groups who uptime free locale getconf base32 base64 diff diff3
    zcat bzcat xzcat dirs shift return exit break continue ulimit umask help times numfmt tput pgrep pidof
    caller""".split()
)

HARMLESS = [
    # files and text
    "ls", "ls -la", "ls -lah src/", "ls -d */", "ls -t | head -1", "cat README.md", "cat a b | head -n 20",
    "head -n 50 src/main.py", "tail -n 100 logs/app.log", "tail -f log", "wc -l src/*.py", "wc -c < README.md",
    "grep -r TODO .", "grep -rn 'def main' src/ 2>/dev/null", "grep -c foo file.txt || true", "egrep 'a|b' f",
    "grep -v '^#' config | grep -v '^$'", "rg -n foo src", "rg --files | head", "ag foo", "fd -e py",
    "find . -name '*.py' | head -20", "find . -type f -name '*.md' -not -path './node_modules/*'",
    "find src -name '*.py' -newer setup.py", "find . -name '*.py' -exec grep -l TODO {} +",
    "find . -name '*.py' | xargs grep -l TODO", "xargs -n1 echo < list.txt", "stat src/a.py", "file README.md",
    "du -sh .", "du -a src | sort -n | tail", "df -h", "tree -L 2", "diff a.txt b.txt", "diff -u a b | head",
    "diff <(ls a) <(ls b)", "cmp a b", "comm -12 a b", "join a b", "sort file.txt",
    "sort -u file.txt | uniq -c | sort -rn | head", "cut -d, -f1 data.csv", "tr 'a-z' 'A-Z' < f", "paste a b",
    "column -t data.tsv", "fold -w 80 file", "nl file", "expand file", "fmt file", "tac file | head",
    "rev <<< hello", "jq . package.json", "jq '.dependencies | keys' package.json",
    "cat package.json | jq -r '.version'", "md5sum README.md", "sha256sum dist/*.tar.gz", "xxd README.md | head",
    "od -c f | head", "hexdump -C f | head", "strings binary | head", "less README.md", "more README.md",
    "base64 -d <<< aGVsbG8=", "head -c 100 /dev/urandom | base64", "cat /etc/os-release", "realpath src",
    "readlink -f src/link", "basename src/a.py", "dirname src/a.py", "awk '{print $1}' file",
    "awk -F: '{print $1}' /etc/passwd | head", "awk 'NR == 1' f", "sed -n '1,10p' file", "sed 's/foo/bar/' file",
    "sed -e 's/a/b/' -e 's/c/d/' file", "cat file | sed 's/x/y/g' | sort", "uniq f", "uniq -c in",
    "tar tf a.tgz", "tar -xOf a.tgz f", "dd if=a", "sort -u in",
    # git, read-only
    "git status", "git status --short", "git log --oneline -10", "git log -p -- src/a.py | head -50", "git diff",
    "git diff --stat HEAD~1", "git diff --cached", "git show HEAD", "git show HEAD:src/a.py", "git branch",
    "git branch -a", "git branch --show-current", "git branch --list 'f*'", "git remote -v", "git rev-parse HEAD",
    "git rev-parse --abbrev-ref HEAD", "git rev-parse --show-toplevel", "git ls-files | wc -l",
    "git blame src/a.py | head", "git describe --tags --always", "git stash list", "git config --get user.email",
    "git log --format='%h %s' -5", "git shortlog -sn | head", "git tag", "git tag -l 'v*'", "git --no-pager log -3",
    "git -C src status", "git log --all --graph --oneline | head -20", "git show --stat HEAD",
    "git ls-tree -r HEAD --name-only | head", "git cat-file -p HEAD", "git merge-base HEAD main",
    "git for-each-ref --format='%(refname)' refs/heads", "git diff main...HEAD --stat",
    "git log --oneline | head -5 && git status", "git ls-remote origin", "git help log",
    # output to the terminal, errors away
    "echo hello", "echo 'hello world' >&2", "echo x 2>/dev/null", "echo hi > /dev/null", "echo out; echo err >&2",
    "printf '%s\\n' a b c", "printf 'value: %d\\n' 42", "printf '%s\\n' \"$x\"", "echo a > /dev/stdout",
    "ls nonexistent 2>&1 || echo no", "echo x > /dev/null 2>&1",
    # the shell: where am I, what is there
    "pwd", "cd src && ls", "cd src && pwd && ls -la", "cd \"$(git rev-parse --show-toplevel)\" && ls",
    "(cd src && ls)", "which python3", "type ls", "type -a python3", "command -v git", "hash", "help cd", "jobs",
    "wait", "times", "dirs", "umask", "ulimit -n", "true", "false || echo failed", "echo $?", "echo \"$@\"",
    "echo \"$PATH\" | tr ':' '\\n'", "echo $HOME", "echo ~", "echo \"${HOME}/x\"", "echo \"${x:-default}\"",
    "echo \"${#HOME}\"", "echo $((1 + 2))", "(( 1 + 1 ))", "(( i > 3 )) && echo", "basename \"$PWD\"",
    "env | sort", "env | grep PATH", "env", "printenv HOME", "set -e; ls", "set -euo pipefail; ls src",
    "set -o pipefail; git log | head", "shopt -s nullglob; ls *.txt", "shopt -s globstar; ls **/*.py",
    "compgen -c | head", "trap 'echo bye' EXIT", "trap - INT", "unset FOO", "export FOO=bar; echo $FOO",
    "local_var=1; echo $local_var", "FOO=1 ls && export BAR=2",
    # tests and variables that only hold data
    "test -f README.md && echo yes", "[ -d src ] && echo dir", "[ -f \"$f\" ] || echo missing",
    "[ \"$a\" = \"$b\" ]", "[[ -n \"$HOME\" ]] && echo set", "[[ $x == y* ]]", "[[ -f a && b > c ]] && echo ok",
    "test -v HOME && echo set", "read -r first < file; echo \"$first\"", "read -r line < f",
    "mapfile -t lines < file; echo \"${#lines[@]}\"", "readarray -t arr < file",
    "declare -a arr=(1 2 3); echo \"${arr[1]}\"", "printf -v out '%s' hi; echo \"$out\"", "let i=1+2; echo $i",
    "declare -i n=5; echo $n", "local x=$(pwd)", "x=$(ls)", "x=$(ls | wc -l); echo $x",
    "n=$(git rev-list --count HEAD); echo \"$n commits\"", "files=$(find . -name '*.py'); echo \"$files\"",
    "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i",
    "count=0; for f in *; do count=$((count + 1)); done; echo $count",
    # control flow
    "for f in src/*.py; do echo \"$f\"; done", "for f in src/*.py; do wc -l \"$f\"; done",
    "for i in 1 2 3; do echo $i; done", "while read -r line; do echo \"$line\"; done < file.txt",
    "if [ -f a ]; then echo a; else echo b; fi", "case \"$x\" in a) echo a;; *) echo other;; esac",
    "{ echo a; echo b; } | sort", "ls src || true", "echo done; echo really done", "ls; pwd; date", "! grep -q x f",
    "until false; do :; done", "while read l; do cd sub; done; ls", "cat <<'EOF'\nsome text\nEOF",
    "cat <<EOF\nhome is $HOME\nEOF", "cat <<EOF\n> f\n>> g\nEOF",
    # system information
    "date", "date +%Y-%m-%d", "date -u +%s", "date -d yesterday +%F", "id", "whoami", "uname -a", "hostname",
    "ps aux | grep python", "ps -ef", "sleep 1", "seq 1 10", "yes | head -3", "nproc", "uptime", "free -m",
    "expr 1 + 2", "numfmt --to=iec 1048576", "getconf PAGESIZE", "locale", "tty", "groups", "who", "arch",
    "pgrep -f python", "pidof bash", "tput cols",
    # wrappers around read-only commands
    "time ls", "nice ls", "timeout 5 cat file", "env LC_ALL=C sort file", "LC_ALL=C sort file", "TZ=UTC date",
    "NO_COLOR=1 ls", "PAGER=cat git log -3", "GIT_PAGER=cat git log -3", "command ls", "builtin echo x",
    "nohup true", "stdbuf -oL cat f",
    # versions and listings of tools
    "python3 --version", "node --version", "npm --version", "pip list", "pip show requests", "npm ls",
    "go version", "cargo tree",
    # the network, to stdout
    "curl -s https://example.com | head", "curl -sI https://example.com", "wget -qO- https://example.com | head",
    "curl -s https://x | jq .",
    # baton's own reads
    "baton brief", "baton status", "baton log -n 5", "baton verify", "baton status --json",
]


def test_the_read_only_list_is_the_audited_one() -> None:
    assert set(PURE) == AUDITED


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_every_listed_program_is_read_only_with_arguments(name: str) -> None:
    check(f"{name} -x --y=z a b", READ)


def test_the_harmless_corpus_is_big_and_distinct() -> None:
    assert len(HARMLESS) >= 250
    assert len(set(HARMLESS)) == len(HARMLESS)


@pytest.mark.parametrize("command", HARMLESS, ids=[repr(c)[:60] for c in HARMLESS])
def test_harmless_commands_stay_read_only(command: str) -> None:
    check(command, READ)
