"""store.shell.scan: which files one Bash command may write, read statically (nothing is run)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.shell.scan import Scan, scan

REPO = Path(__file__).resolve().parents[2]
CWD = "/work/proj"
HOME = "/home/u"
T, F = True, False


def at(path: str) -> str:
    """Where a path written in a row lands: "~/" is $HOME, relative paths are under CWD."""
    if path.startswith("~/"):
        return HOME + path[1:]
    return path if path.startswith("/") else f"{CWD}/{path}"


# (command, paths it writes, whether its effect is opaque, whether it is read-only)
Row = Tuple[str, Sequence[str], bool, bool]
BYPASSES: list[Row] = [
    ('cat > .baton/steps.jsonl <<EOF\n{"step": "a"}\nEOF', [".baton/steps.jsonl"], F, F),
    ("cat >> .baton/steps.jsonl <<'EOF'\n> forged\nEOF", [".baton/steps.jsonl"], F, F),
    ("tee -a .baton/steps.jsonl", [".baton/steps.jsonl"], F, F),
    ("echo x | tee .baton/steps.jsonl > /dev/null", [".baton/steps.jsonl"], F, F),
    ("sed -i s/x/y/ .baton/plan.json", [".baton/plan.json"], F, F),
    ("cp x .baton/plan.json", [".baton/plan.json"], F, F),
    ("mv x .baton/", [".baton", ".baton/x", "x"], F, F),
    ("mv .baton/steps.jsonl /tmp/", ["/tmp", "/tmp/steps.jsonl", ".baton/steps.jsonl"], F, F),
    ("rm -rf .baton", [".baton"], F, F),
    ("truncate -s0 .baton/steps.jsonl", [".baton/steps.jsonl"], F, F),
    ("python3 -c \"open('.baton/steps.jsonl','a')\"", [], T, F),
    ("echo x >| f", ["f"], F, F),
    ("echo x>f", ["f"], F, F),
    ("echo x 1>f", ["f"], F, F),
    (": > f", ["f"], F, F),
    ("> f", ["f"], F, F),
    ("printf x | dd of=f", ["f"], F, F),
    ("(cd .baton; echo x > plan.json)", [".baton/plan.json", "plan.json"], F, F),
    ("(cd .baton && echo x > plan.json)", [".baton/plan.json"], F, F),
    ("cd src && cd .. && echo x > .baton/p", [".baton/p"], F, F),
    ("cd .baton && echo x > steps.jsonl", [".baton/steps.jsonl"], F, F),
    ("bash -c 'echo x > .baton/p'", [".baton/p"], F, F),
    ("$(echo rm) f", [], T, F),
    ("echo hi >&2", [], F, T),
    ("ls 2>/dev/null", [], F, T),
    ("git status", [], F, T),
    ("git checkout .", [], T, F),
    ('baton record a done "note > x"', [], F, F),
    ("find . -name x -delete", [], T, F),
    ("xargs rm < list", [], T, F),
    ("awk '{print > \"f\"}' x", [], T, F),
    ("cat <<EOF\n> f\n>> g\nEOF", [], F, T),
    ("cat <<-EOF\n\t> f\n\tEOF\necho done > real", ["real"], F, F),
    ("cat <<EOF\n$(rm g) `touch h`\nEOF", ["g", "h"], F, F),
    ("cat <<'EOF'\n$(rm g)\nEOF", [], F, T),
    ("ln -s .baton/steps.jsonl x && echo forged >> x", ["x", ".baton/steps.jsonl"], F, F),
    ("ln .baton/steps.jsonl hard", ["hard", ".baton/steps.jsonl"], F, F),
    ("chmod -w .baton/steps.jsonl", [".baton/steps.jsonl"], F, F),
    ("eval 'echo x > .baton/p'", [".baton/p"], F, F),
    ("cd /tmp; rm -rf .baton", ["/tmp/.baton", ".baton"], F, F),
]
REDIRECTIONS: list[Row] = [
    ("echo x >> f", ["f"], F, F),
    ("echo x &> f", ["f"], F, F),
    ("echo x &>> f", ["f"], F, F),
    ("echo x 2> err", ["err"], F, F),
    ("echo x 2>> err", ["err"], F, F),
    ("exec 3<> rw", ["rw"], F, F),
    ("echo x {fd}> named", ["named"], F, F),
    ("echo x >& out", ["out"], F, F),
    ("cat < in", [], F, T),
    ('cat <<< "a > b"', [], F, T),
    ("echo x 2>&1", [], F, T),
    ("echo x > /dev/null 2>&1", [], F, T),
    ("echo a > /dev/stdout; echo b > /dev/stderr; echo c > /dev/fd/3", [], F, T),
    ("echo x >&-", [], F, T),
    ("echo x > -", [], F, T),
    ("echo '>' x", [], F, T),
    ('echo ">" x', [], F, T),
    ("echo \\> x", [], F, T),
    ("echo $'\\x3e' x", [], F, T),
    ("echo a#>f", ["f"], F, F),
    ("echo a # > f", [], F, T),
    (">f echo", ["f"], F, F),
    ("echo x >\\\nf", ["f"], F, F),
    ("{ echo a; echo b; } > out 2>&1", ["out"], F, F),
    ("(echo) >> out", ["out"], F, F),
    ("for i in 1 2; do echo $i; done > out", ["out"], F, F),
    ("if true; then echo; fi 2>/dev/null", [], F, T),
    ("while read l; do echo $l; done < in > out", ["out"], F, F),
    ("echo > ~/notes", ["~/notes"], F, F),
    ("echo > $HOME/a > ${HOME}/b > \"$HOME\"/c > $PWD/d > ~+/e", ["~/a", "~/b", "~/c", "d", "e"], F, F),
    ("echo > $OUT", [], T, F),
    ('echo > "${F}"', [], T, F),
    ("echo > *.txt", [], T, F),
    ("echo > f{1,2}", [], T, F),
    ("echo > ~bob/x", [], T, F),
    ('echo > "~/x"', [f"{CWD}/~/x"], F, F),
    ("echo > $(mktemp)", ["/tmp/tmp.XXXXXXXXXX"], T, F),
    ("tee >(cat > f) < x", ["f"], F, F),
    ("diff <(ls a) <(ls b)", [], F, T),
    ("echo x > /abs/path", ["/abs/path"], F, F),
    ("echo x > ./a/./b//c", ["a/b/c"], F, F),
    ("echo x > ../up", ["../up"], F, F),
    ("echo x > $'q\\x41'", ["qA"], F, F),
]
CONTROL: list[Row] = [
    ("echo a; echo b > f", ["f"], F, F),
    ("echo a && rm b || touch c", ["b", "c"], F, F),
    ("echo a | tee f | wc -l", ["f"], F, F),
    ("ls |& tee log", ["log"], F, F),
    ("sleep 1 & echo x > f", ["f"], F, F),
    ("echo a\necho b > f", ["f"], F, F),
    ("! grep -q x f", [], F, T),
    ("time ls", [], F, T),
    ("time -p rm f", ["f"], F, F),
    ("case $x in a) rm a;; b|c) echo > b;; esac", ["a", "b"], F, F),
    ("for f in *.py; do echo \"$f\"; done", [], F, T),
    ("until false; do :; done", [], F, T),
    ("[[ -f a && b > c ]] && echo ok", [], F, T),
    ("(( i > 3 )) && echo", [], F, T),
    ("x=$(ls)", [], F, T),
    ("x=`rm -f y`", ["y"], F, F),
    ('echo "$(rm -rf x)"', ["x"], F, F),
    ("echo $(echo $(touch deep))", ["deep"], F, F),
    ("a=(1 2 $(rm q))", ["q"], F, F),
    ("x=$(case a in a) echo;; esac); rm q", ["q"], F, F),
    ("f() { rm gx; }; f", ["gx"], F, F),
    ("function g { touch t; }; g", ["t"], F, F),
    ("f() { echo > .baton/x; }; cd /tmp && f", ["/tmp/.baton/x"], F, F),
    ("if [ -f x ]; then cd a; fi; touch y", ["a/y", "y"], F, F),
    ("cd .baton | cat; touch x", ["x"], F, F),
    ("cd .baton & touch x", ["x"], F, F),
    ("{ cd .baton; }; touch x", [".baton/x", "x"], F, F),
    ("cd .baton || exit 1; touch x", [".baton/x", "x"], F, F),
    ("cd $D && touch rel", [], T, F),
    ("cd $D && touch /abs/x", ["/abs/x"], F, F),
    ("cd $D && ls", [], F, T),
    ("cd - && touch x", [], T, F),
    ("cd ~ && touch d", ["~/d"], F, F),
    ("cd && touch e", ["~/e"], F, F),
    ("pushd /tmp && touch a && popd && touch b", ["/tmp/a"], T, F),
    ("cd -P a/.. && touch c", ["a/../c"], F, F),
    ("cd a/.. && touch c", ["c"], F, F),
    ("while read l; do cd sub; done; ls", [], F, T),
    ("cd sub && cd \"$(git rev-parse --show-toplevel)\" && touch x", [], T, F),
]
WRAPPERS: list[Row] = [
    ("sudo rm /etc/x", ["/etc/x"], F, F),
    ("sudo -u root tee /etc/y", ["/etc/y"], F, F),
    ("sudo -s", [], T, F),
    ("env A=1 B=2 tee f", ["f"], F, F),
    ("env", [], F, T),
    ("env | grep X", [], F, T),
    ("nice -n 5 nohup touch q", ["q"], F, F),
    ("timeout 5 cp a b", ["b"], F, F),
    ("command rm f", ["f"], F, F),
    ("command -v rm", [], F, T),
    ("exec rm f", ["f"], F, F),
    ("stdbuf -oL tee f", ["f"], F, F),
    ("/usr/bin/env tee f", ["f"], F, F),
    ("xargs grep foo", [], F, T),
    ("ls | xargs -I{} cp {} dst/", [], T, F),
    ("xargs sed -n p", [], T, F),
    ("find . -type f -exec grep -l foo {} +", [], F, T),
    ("find . -name '*.pyc' -exec rm {} +", [], T, F),
    ("find . -exec sh -c 'echo > out' \\;", ["out"], F, F),
    ("find . -execdir touch x \\;", [], T, F),
    ("find . -fprint out", ["out"], F, F),
    ("find . -name '*.py' -newer ref", [], F, T),
]
WRITERS: list[Row] = [
    ("tee f1 f2", ["f1", "f2"], F, F),
    ("cp -t dst a b", ["dst", "dst/a", "dst/b"], F, F),
    ("cp --target-directory=dst a", ["dst", "dst/a"], F, F),
    ("cp -r src/ dst/", ["dst", "dst/src"], F, F),
    ("cp a b c dir", ["dir", "dir/a", "dir/b", "dir/c"], F, F),
    ("cp *.py dst/", ["dst"], T, F),
    ("cp src/*.py dst/", ["dst"], F, F),
    ("mv a b", ["b", "a"], F, F),
    ("ln -s target link", ["link", "target"], F, F),
    ("install -m 644 a /usr/local/bin/a", ["/usr/local/bin/a"], F, F),
    ("install -d d1 d2", ["d1", "d2"], F, F),
    ("rmdir d; unlink u; shred -u s; mkfifo p", ["d", "u", "s", "p"], F, F),
    ("touch -r ref a b", ["a", "b"], F, F),
    ("mkdir -p a/b", ["a/b"], F, F),
    ("truncate --size=0 f", ["f"], F, F),
    ("chmod +x a b", ["a", "b"], F, F),
    ("chmod -R 755 d", ["d"], F, F),
    ("chmod --reference=r f", ["f"], F, F),
    ("chown -R u:g d; chgrp g f", ["d", "f"], F, F),
    ("setfacl -m u:x:r f", ["f"], F, F),
    ("sed -i.bak 's/a/b/' f", ["f"], F, F),
    ("sed --in-place s/a/b/ f", ["f"], F, F),
    ("sed -ie 's/a/b/' f", ["f"], F, F),
    ("sed -i -e s/a/b/ f g", ["f", "g"], F, F),
    ("sed -n 's/x/y/p' f", [], F, T),
    ("sed '/end/d;s/e/f/g' f", [], F, T),
    ("sed 's/x/y/w out' f", [], T, F),
    ("sed -e '1e ls' f", [], T, F),
    ("sed -f script.sed f", [], T, F),
    ("perl -pi -e 's/a/b/' f", ["f"], T, F),
    ("perl -ne 'print' f", [], T, F),
    ("dd if=a of=b bs=1k", ["b"], F, F),
    ("dd if=a", [], F, T),
    ("dd of=$X", [], T, F),
    ("sort -o out in", ["out"], F, F),
    ("sort -ro out in", ["out"], F, F),
    ("sort --output=out in", ["out"], F, F),
    ("sort -u in", [], F, T),
    ("sort --compress-program=gzip in", [], T, F),
    ("uniq in out", ["out"], F, F),
    ("uniq -c in", [], F, T),
    ("split -l 10 big part_", ["part_"], F, F),
    ("csplit -f pre f /x/", ["pre"], F, F),
    ("tar czf a.tgz dir", ["a.tgz"], F, F),
    ("tar -c -f out.tar dir", ["out.tar"], F, F),
    ("tar -cf - dir", [], F, T),
    ("tar -xzf a.tgz", [], T, F),
    ("tar tf a.tgz", [], F, T),
    ("tar -xOf a.tgz f", [], F, T),
    ("tar -c dir", [], T, F),
    ("patch -p1 < x.diff", [], T, F),
    ("patch f.c < x.diff", ["f.c"], F, F),
    ("patch --dry-run -p1 < x.diff", [], F, T),
    ("curl -o out.html https://x", ["out.html"], F, F),
    ("curl -sSLo out https://x", ["out"], F, F),
    ("curl https://x", [], F, T),
    ("curl -s https://x > page", ["page"], F, F),
    ("curl -O https://x/f", [], T, F),
    ("curl -K cfg https://x", [], T, F),
    ("wget -O f https://x", ["f"], F, F),
    ("wget -qO- https://x", [], F, T),
    ("wget https://x/f", [], T, F),
    ("yq -i '.a = 1' f.yaml", ["f.yaml"], F, F),
    ("yq '.a' f.yaml", [], F, T),
    ("mktemp", ["/tmp/tmp.XXXXXXXXXX"], F, F),
    ("mktemp -d .baton/x.XXXX", [".baton/x.XXXX"], F, F),
    ("mktemp -p dir", ["dir/tmp.XXXXXXXXXX"], F, F),
    ("awk '{print $1}' f", [], F, T),
    ("awk 'BEGIN{system(\"rm x\")}'", [], T, F),
    ("awk -F, '$2 > 3' f", [], T, F),
    ("awk -f prog.awk f", [], T, F),
    ("rg --pre cat foo", [], T, F),
    ("less -o log f", ["log"], F, F),
    ("tree -o out", ["out"], F, F),
    ("xxd in out", ["out"], F, F),
]
GIT: list[Row] = [
    ("git add .", [".git"], F, F),
    ('git commit -m "x > y"', [".git"], F, F),
    ("git add . && git commit -qm wip", [".git"], F, F),
    ("git -C sub add x", ["sub/.git"], F, F),
    ("git diff --output=d.patch", ["d.patch"], F, F),
    ("git log --oneline | head", [], F, T),
    ("git branch", [], F, T),
    ("git branch --list 'f*'", [], F, T),
    ("git branch new", [], T, F),
    ("git branch --set-upstream-to=origin/main", [], T, F),
    ("git remote -v", [], F, T),
    ("git config --get user.name", [], F, T),
    ("git config user.name bob", [], T, F),
    ("git -c core.pager=sh log", [], T, F),
    ("git stash", [], T, F),
    ("git stash list", [], F, T),
    ("git show HEAD:f > f", ["f"], F, F),
    ("git push", [], T, F),
    ("git reset --hard", [], T, F),
    ("git rev-parse HEAD && git ls-files && git grep foo && git blame f", [], F, T),
]
PROGRAMS: list[Row] = [
    ("python3 x.py", [], T, F),
    ("python3.11 -m pytest -q", [], T, F),
    ("python3 --version", [], F, T),
    ("pytest -q", [], T, F),
    ("node -e 'x'", [], T, F),
    ("node --version", [], F, T),
    ("ruby x.rb", [], T, F),
    ("php -r 'x'", [], T, F),
    ("bash script.sh", [], T, F),
    ("sh", [], T, F),
    ('sh -c "$X"', [], T, F),
    ("sh -c 'rm a; touch b'", ["a", "b"], F, F),
    ("bash -lc 'rm -f a'", ["a"], F, F),
    ("bash -c 'cd .baton && echo > x'; echo > y", [".baton/x", "y"], F, F),
    ("fish -c 'echo'", [], T, F),
    ("source venv/bin/activate", [], T, F),
    (". ./env.sh", [], T, F),
    ("eval $X", [], T, F),
    ("make test", [], T, F),
    ("npm test", [], T, F),
    ("npx foo", [], T, F),
    ("pip install x", [], T, F),
    ("pip list", [], F, T),
    ("trap 'rm -f /tmp/lock' EXIT", ["/tmp/lock"], F, F),
    ("trap 'rm -f lock' EXIT", [], T, F),
    ("frob x", [], T, F),
    ("./run.sh", [], T, F),
    ("bin/tool x", [], T, F),
    ("/usr/bin/rm f", ["f"], F, F),
    ("alias ls=rm", [], T, F),
    ("PATH=/tmp:$PATH ls", [], T, F),
    ("export PATH=$PATH:/x", [], T, F),
    ("HOME=/tmp ls", [], T, F),
    ("LD_PRELOAD=x.so ls", [], T, F),
    ("for PATH in /x; do ls; done", [], T, F),
    ("FOO=1 ls && export BAR=2", [], F, T),
    ("shopt -s lastpipe", [], T, F),
]
READ_ONLY: list[Row] = [
    (command, [], F, T)
    for command in (
        "ls -la", "cat a b", "head -n 5 f", "tail -f log", "grep -rn foo .", "egrep x f", "rg -n foo", "ag foo",
        "wc -l f", "echo hi", "printf '%s\\n' a", "pwd", "which ls", "type ls", "stat f", "file f", "du -sh .",
        "df -h", "tree -L 2", "diff a b", "cmp a b", "comm a b", "sort f", "cut -d, -f1 f", "tr a b < f",
        "paste a b", "column -t f", "fold f", "nl f", "jq . f.json", "date", "printenv", "true", "false",
        "test -f x", "[ -f x ]", "basename a/b", "dirname a/b", "realpath x", "readlink -f x", "md5sum f",
        "sha256sum f", "cksum f", "xxd f", "od -c f", "hexdump -C f", "strings f", "id", "whoami", "uname -a",
        "hostname", "ps aux", "sleep 1", "seq 3", "yes | head -3", "fd -e py", "less f", "more f",
        "baton brief", "baton status", "baton log -n 5", "baton verify", "set -euo pipefail; ls", "cd src && ls",
        "find . -name '*.py' | xargs wc -l", "git log -p -- f | grep x", "git describe --tags", "uniq f",
        "sed -n 1p f", "awk 'NR == 1' f", "curl -s https://x | jq .", "local x=$(pwd)", "read -r line < f",
    )
]
PARSE_ERRORS: list[Row] = [
    ('echo "unterminated', [], T, F),
    ("echo 'x", [], T, F),
    ("echo $(ls", [], T, F),
    ("if true; then echo", [], T, F),
    (")", [], T, F),
    ("fi", [], T, F),
    ("echo >", [], T, F),
]
TABLE = BYPASSES + REDIRECTIONS + CONTROL + WRAPPERS + WRITERS + GIT + PROGRAMS + READ_ONLY + PARSE_ERRORS


def test_the_table_is_big_enough() -> None:
    assert len(TABLE) >= 120
    assert len({row[0] for row in TABLE}) == len(TABLE), "a command appears twice in the table"


@pytest.mark.parametrize("command,writes,opaque,readonly", TABLE, ids=[repr(row[0])[:48] for row in TABLE])
def test_table(command: str, writes: Sequence[str], opaque: bool, readonly: bool) -> None:
    result = scan(command, CWD, HOME)
    assert sorted(result.writes) == sorted({at(w) for w in writes}), result
    assert bool(result.opaque) is opaque, result.opaque
    assert result.readonly is readonly, result


@pytest.mark.parametrize("command,argv", [
    ('baton record a done "note > x"', [("baton", "record", "a", "done", "note > x")]),
    ("baton brief && baton status", [("baton", "brief"), ("baton", "status")]),
    ("/opt/plugin/bin/baton log -n 3", [("baton", "log", "-n", "3")]),
    ('"$CLAUDE_PLUGIN_ROOT/bin/baton" record s done', [("baton", "record", "s", "done")]),
    ("python3 /opt/plugin/store record s failed 'it broke'", [("baton", "record", "s", "failed", "it broke")]),
    ("cd .. && python3 store verify", [("baton", "verify")]),
    ("x=$(baton status --json)", [("baton", "status", "--json")]),
    ("bash -c 'baton record s done'", [("baton", "record", "s", "done")]),
    ("echo baton record", []),
])
def test_baton_invocations_are_captured(command: str, argv: list[tuple[str, ...]]) -> None:
    assert list(scan(command, CWD, HOME).baton) == argv


@pytest.mark.parametrize("command,readonly", [
    ("baton brief", True), ("baton status --json", True), ("baton record a done", False),
    ("baton init a b", False), ("baton approve a", False),
])
def test_only_baton_reads_are_read_only(command: str, readonly: bool) -> None:
    result = scan(command, CWD, HOME)
    assert result.readonly is readonly and not result.opaque and not result.writes


@pytest.mark.parametrize("command,reason", [
    ("python3 -c 'x'", "python3 -c runs inline code"),
    ("frob x", "unknown command 'frob'"),
    ("echo > $OUT", "write target uses a variable: $OUT"),
    ("echo > *.txt", "write target uses a glob: *.txt"),
    ("$(echo rm) f", "command name is computed: $(echo rm)"),
    ("rm $(ls)", "write target uses command substitution: $(ls)"),
    ("git checkout .", "git checkout may rewrite files"),
    ("eval $X", "eval runs computed code"),
    ("make test", "make test runs a program that may write files"),
    ("python3 -m pytest", "python3 -m pytest runs a program that may write files"),
    ("bash run.sh", "bash runs a script 'run.sh'"),
    ("cd $D; touch x", "write target is relative to an unknown directory: x"),
    ("curl -O https://x/f", "curl -O writes a file named from the URL"),
    ("echo 'x", "cannot parse: unterminated single quote"),
])
def test_opaque_reasons_name_the_culprit(command: str, reason: str) -> None:
    assert reason in scan(command, CWD, HOME).opaque


def test_commands_lists_every_simple_command_in_order() -> None:
    assert scan("cd src && ls | wc -l; sudo rm x", CWD, HOME).commands == ("cd", "ls", "wc", "sudo", "rm")
    assert scan("echo $(date) > f", CWD, HOME).commands == ("date", "echo")
    assert scan("baton brief; $CMD", CWD, HOME).commands == ("baton", "$CMD")
    assert scan("", CWD, HOME) == Scan((), (), (), True, ())


def test_scans_compare_by_value() -> None:
    assert scan("rm x", CWD, HOME) == scan("rm  x", CWD, HOME) == Scan((f"{CWD}/x",), (), (), False, ("rm",))
    assert scan("rm x", CWD, HOME) != scan("rm y", CWD, HOME)
    assert len({scan("ls", CWD, HOME), scan("ls", CWD, HOME)}) == 1


def test_scan_is_immutable_and_typed() -> None:
    result = scan("echo x > f; frob", CWD, HOME)
    assert isinstance(result, Scan)
    with pytest.raises(AttributeError):
        result.writes = ()  # type: ignore[misc]
    assert "writes=('/work/proj/f',)" in repr(result)


def test_a_relative_cwd_or_home_makes_relative_targets_opaque() -> None:
    assert scan("echo > f", "relative", HOME).opaque == ("write target is relative to an unknown directory: f",)
    assert scan("echo > /abs", "", HOME).writes == ("/abs",)
    assert scan("echo > ~/x", CWD, "").opaque


def test_nothing_is_executed(tmp_path: Path) -> None:
    made = tmp_path / "made"
    for command in (f"touch {made}", f"echo $(touch {made})", f"bash -c 'touch {made}'", f"eval touch {made}"):
        assert at(str(made)) in scan(command, str(tmp_path), HOME).writes
    assert not made.exists()


@pytest.mark.parametrize("command", [
    None, b"echo", 42, "", " ", "\x00", "echo \x00 > f", "\ud800", "a" * 200_000, "$(" * 5000, "`" * 3001,
    "(" * 3000 + ")" * 3000, "{ " * 2000, "if true; then " * 1000, "while true; do cd x; " * 40,
    "f() { f; f; f; f; f; }; f", "eval " * 2000 + "ls", "xargs " * 3000 + "rm", "sudo " * 3000 + "rm x",
    "cat <<E\n" * 3000, "${" * 3000, "((" * 3000, "echo " + "$((" * 3000, "ls | " * 5000 + "cat",
    "\\" * 50_000, "'" * 50_001, ";;", "case", "esac", "do done", "[[", "]]", "}", "{", "((", "))", "<<",
], ids=lambda command: repr(command)[:40])
def test_never_raises_and_stays_fast(command: object) -> None:
    start = time.perf_counter()
    result = scan(command, CWD, HOME)  # type: ignore[arg-type]
    assert time.perf_counter() - start < 10
    _check_types(result)


def test_imports_only_the_standard_library_it_needs() -> None:
    code = ("import sys; before = set(sys.modules); import store.shell.scan; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert not loaded & {"typing", "dataclasses", "subprocess", "pathlib", "json", "shlex"}, loaded


def _check_types(result: Scan) -> None:
    assert isinstance(result, Scan)
    assert isinstance(result.writes, tuple) and all(isinstance(w, str) and w.startswith("/") for w in result.writes)
    assert isinstance(result.opaque, tuple) and all(isinstance(o, str) and o for o in result.opaque)
    assert isinstance(result.baton, tuple) and all(isinstance(a, tuple) and a[0] == "baton" for a in result.baton)
    assert all(isinstance(x, str) for argv in result.baton for x in argv)
    assert isinstance(result.commands, tuple) and all(isinstance(c, str) for c in result.commands)
    assert isinstance(result.readonly, bool)
    assert not result.readonly or not (result.writes or result.opaque)


SHELLISH = st.lists(st.sampled_from(
    list("ab ;&|()<>{}[]$`'\"\\\n\t#~*?=-,./!0123456789") + [
        "$(", "<<", "<<EOF\n", "EOF\n", "if ", "then ", "fi", "case ", " in ", "esac", ";;", "do ", "done",
        "for ", "while ", "((", "))", "${", "[[", "]]", "function ", "cd ", "rm ", "echo ", "bash -c ", "eval ",
        "find . -exec ", "xargs ", "sed -i ", "git ", "baton ", "$'", "<(", ">(", "&>", ">&", "2>&1", "tee ",
        "cp ", "mv ", "time ", "! ", ".baton/", "$HOME", "~/", "sudo ", "env ", "python3 -c ", "-t ", "-o ",
    ]), max_size=40).map("".join)


@given(st.text(max_size=300))
def test_any_text_gives_a_well_typed_scan(text: str) -> None:
    _check_types(scan(text, CWD, HOME))


@given(SHELLISH)
def test_any_shell_soup_gives_a_well_typed_scan(text: str) -> None:
    _check_types(scan(text, CWD, HOME))
    assert scan(text, CWD, HOME).writes == scan(text, CWD, HOME).writes


READERS = ["ls", "cat", "echo", "grep", "wc", "head", "tail", "printf", "cut", "sort", "uniq", "jq .", "git status",
           "git log", "baton brief", "true", ":", "date", "pwd", "test -f x", "[ -n x ]", "env", "command -v ls"]
SEGMENT = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,8}", fullmatch=True)
ARG = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9.,:=+_-]{0,8}", fullmatch=True)


@given(reader=st.sampled_from(READERS), args=st.lists(ARG, max_size=4), parts=st.lists(SEGMENT, min_size=1, max_size=4),
       absolute=st.booleans(), op=st.sampled_from([">", ">>", ">|", "1>", "2>", "&>", "&>>", "<>"]),
       quote=st.sampled_from(["", "'", '"']), before=st.booleans())
def test_a_redirection_of_a_reader_is_a_write(reader: str, args: list[str], parts: list[str], absolute: bool,
                                              op: str, quote: str, before: bool) -> None:
    path = ("/tmp/" if absolute else "") + "/".join(parts)
    redirection = f"{op} {quote}{path}{quote}"
    command = f"{redirection} {reader} {' '.join(args)}" if before else f"{reader} {' '.join(args)} {redirection}"
    result = scan(command, CWD, HOME)
    assert at(path) in result.writes, (command, result)
    assert not result.readonly
