"""store.shell.scan as a whole: its contract (types, immutability, never raising, never running
anything, staying fast, importing little), baton's own invocations, and properties over any text.
The specification of what it understands, family by family, is in the other files here."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from untraced import untraced

from store.shell.findings import Invocation, Scan
from store.shell.scan import scan

REPO = Path(__file__).resolve().parents[2]
CWD = "/work/proj"
HOME = "/home/u"
T, F = True, False


def at(path: str) -> str:
    """Where a path written in a row lands: "~/" is $HOME, relative paths are under CWD."""
    if path.startswith("~/"):
        return HOME + path[1:]
    return path if path.startswith("/") else f"{CWD}/{path}"


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
    ("$(echo rm) f", "the command name is computed: $(echo rm)"),
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
    rm = Scan((f"{CWD}/x",), (), (), False, ("rm",), (Invocation(("rm", "x"), (CWD,), False),))
    assert scan("rm x", CWD, HOME) == scan("rm  x", CWD, HOME) == rm
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
    _check_types(scan(command, CWD, HOME))  # type: ignore[arg-type]  # measured by coverage, if it runs
    with untraced():  # timed as people run it
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
    assert all(isinstance(inv, Invocation) and all(w is None or isinstance(w, str) for w in inv.argv)
               for inv in result.invocations)
    assert set(result.links) <= set(result.writes)
    assert all(isinstance(name, str) for name in result.assigned + result.unresolved)
    assert set(result.unresolved) <= set(result.opaque)


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
