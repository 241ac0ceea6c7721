"""The Bash gate reads commands without ``re`` (importing it costs a hook process as much as starting
Python): each hand-written scanner answers what the regular expression it replaced answered.

Every row pairs a scanner with its regex, kept here as the reference, and hypothesis feeds both
texts from an alphabet of the characters that matter to it. A last test runs the gate on common
commands in a fresh interpreter and checks that ``re`` was never imported.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.base import chars
from store.gate import permissions
from store.gate.rules import deny_bash, effects
from store.shell import builtin, environment, known, programs, scan, simple, spans, variables, words, writers

ROOT = Path(__file__).resolve().parents[2]
NAMES = "aZ_09"
ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
ARITH = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
                   r"|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)")


def _match_end(pattern: str, flags: int = 0) -> Callable[[str], Optional[int]]:
    compiled = re.compile(pattern, flags)
    return lambda s: (m.end() if (m := compiled.match(s)) else None)


def _full(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda s: compiled.fullmatch(s) is not None


def _found(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags)
    return lambda s: compiled.search(s) is not None


def _ansi_reference(body: str) -> str:
    """words.ansi_c as it was written with ``re`` (and a final ``\\c`` kept, as bash keeps it)."""
    escapes = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xuU" and len(esc) > 1:
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc[0] == "c":
            return chr(ord(esc[1]) & 0x1F) if len(esc) > 1 else "\\c"
        return escapes.get(esc, esc)

    return re.sub(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", one, body,
                  flags=re.S)


def _changes_programs_reference(name: str) -> bool:
    pattern = re.compile(
        r"(?:LD_|DYLD_|GIT_|BASH_FUNC_|BASH|LESS|TAR_|PYTHON|NODE_|NPM_|PERL|RUBY|JAVA_|_JAVA_|GLIBC_|MALLOC_|XDG_"
        r"|SSH_|CURL_|GREP_|COMP_|READLINE_|HIST)"
        r"|(?:_OPTIONS|_OPTS|_OPT|_CONFIG|_COMMAND|_PROGRAM|_PAGER|_EDITOR|_ASKPASS)\Z")
    if name in environment._PAGERS or name in environment._HARMLESS:
        return environment.changes_programs(name)  # decided before any pattern
    return (name in environment._NAMES or pattern.search(name) is not None
            or re.search(r"(?i)proxy|\Anpm_config_|\Ayarn_|\Apip_", name) is not None)


def _awk_reference(program: str) -> bool:
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', program).replace("||", " ")
    return re.search(r"[>|@]|\bsystem\s*\(", text) is not None


def _identifiers_reference(text: str) -> set:
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    names.update(m.group(1) for m in re.finditer(r"\$\{?([0-9]+|[@*])", text))
    return names


def _assignment_reference(s: str) -> Optional[Tuple[int, int, int]]:
    m = ASSIGN.match(s)
    return (m.end(1), m.end(2) if m.group(2) else m.end(1), m.end()) if m else None


class Row(NamedTuple):
    name: str
    mine: Callable[[str], Any]
    theirs: Callable[[str], Any]
    alphabet: str


ROWS: List[Row] = [
    Row("chars.name_end", lambda s: chars.name_end(s) or None, _match_end(r"[A-Za-z_][A-Za-z0-9_]*"), NAMES + "=-é"),
    Row("chars.is_digits", chars.is_digits, _full(r"[0-9]+"), "019a٣\n"),
    Row("chars.assignment", chars.assignment, _assignment_reference, NAMES + "[]+=\n"),
    Row("chars.arith_assign_end", lambda s: (e if (e := chars.arith_assign_end(s, 0)) > 0 else None),
        _match_end(r"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"), " \t\u2003=+-<>*|^a"),
    Row("spans.fd_end", lambda s: spans.fd_end(s, 0) or None,
        _match_end(r"(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])"), "09{}a_<>& "),
    Row("spans.array_start", lambda s: spans.array_start(s, 0, len(s)),
        _full(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="), NAMES + "[]+=(\n"),
    Row("spans.tilde_in_assignment", lambda s: spans.tilde_in_assignment(s, 0, len(s)),
        lambda s: re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=(?:.*:)?\Z", s) is not None, NAMES + "+=:/\n"),
    Row("spans.tilde_end", lambda s: (e if (e := spans.tilde_end("~" + s, 0)) > 0 else None),
        lambda s: (m.end() if (m := re.match(r"~[A-Za-z0-9._+-]*(?=[/ \t\n;&|()<>:]|\Z)", "~" + s)) else None),
        "a9._+-/ :;$~"),
    Row("spans.dollar_name_end", lambda s: spans.dollar_name_end(s, 0) or None,
        _match_end(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-]"), NAMES + "@*#?$!-{%"),
    Row("spans.plain_parameter", spans.plain_parameter, _full(r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"),
        NAMES + "@*#-:[\n"),
    Row("spans.bracket", lambda s: spans.bracket("[" + s, 0),
        lambda s: re.match(r"\[[^ \t\n;&|()<>]*\]", "[" + s) is not None, "a]][ ;|\n"),
    Row("spans.unescape_backticks", spans.unescape_backticks, lambda s: re.sub(r"\\([$`\\])", r"\1", s), "\\$`a"),
    Row("words.ansi_c", words.ansi_c, _ansi_reference, "\\xuUc0179aAfFnqé'"),
    Row("scan.not_a_file", scan.not_a_file,
        _full(r"/dev/(?:null|stdout|stderr|stdin|tty|fd/[0-9]+)|/proc/self/fd/[0-9]+"), "/devnulfdproc09\n"),
    Row("scan._descriptor", scan._descriptor, _full(r"[0-9]+-?|-"), "09-a\n"),
    Row("scan._simple_var", scan._simple_var,
        lambda s: ("$" + m.group(1)) if (m := re.match(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\Z", s)) else "",
        NAMES + "${}\n"),
    Row("scan.arith_assigned", scan.arith_assigned,
        lambda s: [m.group(1) or m.group(2) or m.group(3) for m in ARITH.finditer(s)], NAMES + " =+-<>*|^\t"),
    Row("known._url_runs", known._url_runs, lambda s: re.match(r"[A-Za-z][A-Za-z0-9+.-]*::", s) is not None,
        "aZ9+.-:_"),
    Row("known._output_option", known._output_option,
        lambda s: re.match(r"--outp(?:ut?)?(?:=|\Z)", s) is not None, "-outp=x\n"),
    Row("builtin._cd_option", builtin._cd_option, _full(r"-[LPe@]+|--"), "-LPe@x"),
    Row("builtin.letters_option", builtin.letters_option, _full(r"[-+][A-Za-z]+"), "-+aZ9\n"),
    Row("simple._assignment", simple._assignment,
        lambda s: re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=", s) is not None, NAMES + "[]+=\n"),
    Row("writers._no_option", writers._no_option, _full(r"-n[a-zA-Z]+"), "-nvZ9"),
    Row("known.is_python", known.is_python, _full(r"(?:python|pypy)(?:[0-9]+(?:\.[0-9]+)?)?"),
        "pythonpy39.\n"),
    Row("programs._shell_option", programs._shell_option, _full(r"[-+][A-Za-z]+|--[a-z-]+"), "-+aZ9"),
    Row("programs._takes_value", programs._takes_value, _full(r"[-+][A-Za-z]*[oO]|--rcfile|--init-file"),
        "-+oOax"),
    Row("programs.awk_writes", programs.awk_writes, _awk_reference, 'a"\\\n>|@system( _é'),
    Row("environment.changes_programs", environment.changes_programs, _changes_programs_reference,
        "PROXYproxyLD_npm_config_OPTSİK"),
    Row("variables.identifiers", variables.identifiers, _identifiers_reference, NAMES + "${}@*+"),
    Row("words.param_name_end", lambda s: words.param_name_end(s, 0) or None,
        _match_end(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]"), NAMES + "@*#-[:"),
    Row("variables._safe", variables._safe, _full(r"[A-Za-z0-9_ \t+\-*/%<>=!&|^~?:,().#]*"), "a0 +-$'[\\\n"),
    Row("permissions._wrapper", permissions._wrapper,
        lambda s: re.match(r"^(?:sudo|command|builtin|exec|nohup|time|setsid|stdbuf|nice|env|timeout|xargs)$", s)
        is not None, "sudoenvtime\n"),
    Row("permissions._duration", permissions._duration, _full(r"[0-9.]+[smhd]?"), "09.smhdx"),
    Row("deny_bash.tokens", deny_bash.tokens, lambda s: re.findall(r"[A-Za-z0-9_.+-]+", s), "aZ9_.+- /é"),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_each_scanner_answers_as_its_regex(row: Row, data: st.DataObject) -> None:
    text = data.draw(st.text(st.sampled_from(row.alphabet), max_size=12))
    assert row.mine(text) == row.theirs(text), text


def test_known_commands_the_regexes_were_written_for() -> None:
    assert spans.fd_end("2>err", 0) == 1 and spans.fd_end("{fd}>x", 0) == 4 and spans.fd_end("22 >x", 0) == 0
    assert scan.arith_assigned("i++, j += 2, k == 3, --n, x<<=1") == ["i", "j", "n", "x"]
    assert words.ansi_c(r"a\tb\x41\u00e9\101\cA\q\\") == "a\tbAéA\x01q\\"
    assert environment.changes_programs("http_proxy") and environment.changes_programs("MY_OPTS")
    assert not environment.changes_programs("PYTHONUNBUFFERED") and not environment.changes_programs("COUNT")
    assert programs.awk_writes('{print > "out"}') and not programs.awk_writes('{print "a>b"}')
    assert effects.reason("Deploy the site now", "deploy*", "s1").count("s1-deploy-the-site") == 1


COMMON = ['grep -rn "def append" src/ledger tests | head -20 && wc -l src/ledger/*.py', "ls -la", "git status",
          "git log --oneline -5", "cat README.md", "sed -n '1,20p' src/app.py", "find . -name '*.py' | wc -l",
          "python3 -m pytest -q tests/test_ledger.py", "awk '{print $1}' data.txt", "echo hi > out.txt",
          "cd src && make test 2>&1 | tail -5", "X=1 Y=$HOME/a ./run.sh --flag", "for f in *.py; do echo $f; done",
          "printf 'FSYNC = True\\n' >> src/server/settings.py", "diff <(sort a) <(sort b)", "rm -rf build/",
          "curl -s https://example.com | jq .name", "tar czf out.tgz src", "npm test", "cp -r src/ /tmp/x",
          "git diff HEAD~1 -- src/ | head", "echo $'a\\tb' | cut -f1", "((i++)); echo $((i+1))"]


def test_the_bash_gate_reads_common_commands_without_importing_re(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from store.base import jsonc as json\n"
        "from store.shell import analyse\n"
        "from store.gate import permissions\n"
        "from store.gate.rules import deny_bash\n"
        "for command in json.loads(sys.argv[1]):\n"
        "    s = analyse(command, sys.argv[2], '/home/u')\n"
        "    permissions.rule_matches('git push*', command)\n"
        "    [deny_bash.hit(p, command, s) for p in ('git push*', '*--force*', 'rm -rf *', 'curl * | sh*')]\n"
        "print(json.dumps(sorted(m for m in ('re', 'fnmatch', 'glob', 'enum', 'functools') if m in sys.modules)))\n"
    )
    import json

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x")
    out = subprocess.run([sys.executable, "-S", "-c", code, json.dumps(COMMON), str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
