"""Shell wildcards without ``re``: ``wild.fnmatchcase`` and ``wild.glob`` answer as ``fnmatch`` and ``glob`` do."""

from __future__ import annotations

import fnmatch
import glob as stdglob
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.base import wild

ROOT = Path(__file__).resolve().parents[2]
# the characters that mean something in a set, and a few that do not; "é" and a newline too
PATTERN_ALPHABET = "ab-z!^[]\\*?.é\n&|~"
PATTERN = st.text(st.sampled_from(PATTERN_ALPHABET), max_size=12)
NAME = st.text(st.sampled_from("abz-!^[]\\.?*é\n&"), max_size=10)


@pytest.mark.parametrize("name,pattern", [
    ("git push origin main", "git push*"), ("git pushx", "git push *"), ("a", "[a-c]"), ("d", "[a-c]"),
    ("-", "[a-]"), ("-", "[-a]"), ("b", "[!a]"), ("a", "[!a]"), ("]", "[]]"), ("]", "[!]]"), ("x", "[!]]"),
    ("[", "["), ("[a", "[a"), ("b", "[z-a]"), ("b", "[!z-a]"), ("\\", "[\\]"), ("b", "[a-b-c]"), ("-", "[a-b-c]"),
    ("c", "[a-b-c]"), ("ab", "*b"), ("aaab", "a*a*b"), ("abc", "a*?c"), ("ac", "a*?c"), ("x\ny", "x*y"),
    ("x\ny", "x?y"), ("", "*"), ("", ""), ("a", ""), ("?", "?"), ("*", "[*]"), ("b", "[*]"), ("m", "[^a]"),
    ("^", "[^a]"), ("é", "[a-ü]"), ("z", "[z-a]"), ("a", "[z-a]"), ("z", "[!z-a]"), ("y", "[az-by]"), ("c", "[bz-a-y]"),
    ("rm -rf /", "rm -rf *"), ("curl x | sh", "curl * | sh*"),
])
def test_known_forms(name: str, pattern: str) -> None:
    assert wild.fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern)


@settings(max_examples=3000, deadline=None)
@given(name=NAME, pattern=PATTERN)
def test_fnmatchcase_agrees_with_fnmatch(name: str, pattern: str) -> None:
    assert wild.fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern), (name, pattern)


@settings(max_examples=1500, deadline=None)
@given(pattern=PATTERN, data=st.data())
def test_fnmatchcase_agrees_on_names_built_to_match(pattern: str, data: st.DataObject) -> None:
    """Random names rarely match: build names from the pattern's own characters, which often do."""
    name = data.draw(st.text(st.sampled_from(pattern.replace("*", "").replace("?", "") or "a"), max_size=10))
    assert wild.fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern), (name, pattern)


SET = st.builds(lambda neg, body, tail: "[" + neg + body + "]" + tail, st.sampled_from(["", "!"]),
                st.text(st.sampled_from("abyz-]!"), max_size=7), st.sampled_from(["", "*", "a", "]"]))


@settings(max_examples=3000, deadline=None)
@given(pattern=SET, name=st.text(st.sampled_from("abcxyz-]!"), min_size=1, max_size=2))
def test_sets_agree_with_fnmatch(pattern: str, name: str) -> None:
    """Sets with ranges, reversed ranges, literal hyphens and brackets, negated or not."""
    assert wild.fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern), (name, pattern)


def test_long_texts_do_not_backtrack_without_end() -> None:
    """The greedy scan stays linear in practice on the shape that hurts naive backtracking."""
    text = "a" * 2000
    assert wild.fnmatchcase(text, "*a*a*a*a*a*b") is False
    assert wild.fnmatchcase(text + "b", "*a*a*a*a*a*b") is True


TREE = ["src/a.py", "src/b.py", "src/.hidden.py", "src/sub/c.py", "src/sub/d.txt", "docs/x.md", ".env",
        "top.py", "we[ir]d.py", "star*.txt", "q?.txt", "dir.d/e.py", "link-target/f.py"]
GLOBS = ["*.py", "src/*.py", "src/.*", "*/*.py", "*/*/*.py", "src/*/", "*/", "src/[ab].py", "src/[!a].py",
         "we[[]ir].py", "star[*].txt", "q[?].txt", "*", ".*", "src/sub/*", "nope/*.py", "src/**/*.py", "**",
         "*.d/*.py", "src/?.py", "s*/s*/*.t?t", "missing[", "src/a.py", "src/", "[sd]*/*", "*/x.*"]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for rel in TREE:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    (tmp_path / "alink").symlink_to(tmp_path / "link-target")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    return tmp_path


def stdlib(pattern: str, root: Path) -> List[str]:
    """What the deny_bash check (store/gate/rules/deny_bash.py) called before: glob.glob with the folder
    escaped, the folder stripped again."""
    found = stdglob.glob(os.path.join(stdglob.escape(str(root)), pattern))
    return sorted(m[len(str(root)) + 1 :] if not os.path.isabs(pattern) else m for m in found)


@pytest.mark.parametrize("pattern", GLOBS + ["alink/*.py", "dangl*", "*/f.py"])
def test_glob_agrees_with_glob(tree: Path, pattern: str) -> None:
    assert sorted(wild.glob(pattern, str(tree))) == stdlib(pattern, tree)


def test_glob_absolute_pattern_ignores_the_folder(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    pattern = str(tree / "src" / "*.py")
    assert sorted(wild.glob(pattern, str(elsewhere))) == stdlib(pattern, elsewhere) == \
        [str(tree / "src" / "a.py"), str(tree / "src" / "b.py")]


def test_glob_in_a_folder_whose_name_has_wildcards(tmp_path: Path) -> None:
    root = tmp_path / "we*ird[1]"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x")
    (tmp_path / "weXird1").mkdir()
    assert wild.glob("src/*.py", str(root)) == ["src/a.py"] == stdlib("src/*.py", root)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.lists(st.sampled_from(["*", "?", "src", "sub", ".", "py", "/", "[ab]", "[!a]", "a", "d", "*."]),
                        min_size=1, max_size=6).map("".join))
def test_glob_agrees_on_generated_patterns(tree: Path, pattern: str) -> None:
    assert sorted(wild.glob(pattern, str(tree))) == stdlib(pattern, tree), pattern


def test_importing_it_loads_no_regex() -> None:
    code = ("import sys; from store.base import wild; wild.fnmatchcase('git push', 'git [p]*'); "
            "wild.glob('*.py', '.'); print(sorted({'re', 'fnmatch', 'glob'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
