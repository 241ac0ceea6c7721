"""Where a write lands: resolution through symlinks, project-relative globs, folding for protection."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from store.base import paths as scope


@pytest.mark.parametrize("path,pattern,matches", [
    ("src/a.py", "src/**", True),
    ("src", "src/**", True),  # the folder itself
    ("src/deep/er/a.py", "src/**", True),
    ("srcx/a.py", "src/**", False),
    ("lib/src/a.py", "src/**", False),
    ("src/a.py", "src/", True),
    ("src/a.py", "./src/**", True),
    ("src/a.py", "src", True),  # a pattern that matches a folder covers everything below it
    ("src/b.py", "src/*.py", True),
    ("src/a/b.py", "src/*.py", False),  # * stays within one segment
    ("a/b/c.py", "**/*.py", True),
    ("c.py", "**/*.py", True),
    ("c.pyc", "**/*.py", False),
    ("x.md", "*.md", True),
    ("docs/x.md", "*.md", False),
    ("abc", "a?c", True),
    ("a/c", "a?c", False),
    ("SRC/a.py", "src/**", False),  # case-sensitive
    ("a+b.txt", "a+b.txt", True),  # regex characters are literal
    ("aab.txt", "a+b.txt", False),
    ("src/a.py", "src/[ab].py", False),  # brackets are literal, not a class
    ("src/[ab].py", "src/[ab].py", True),
    ("anything/at/all", "**", True),
    ("x", "", False),
    ("x", "   ", False),
    ("x", "/", False),
    ("line\nbreak/a", "line\nbreak/**", True),
    (".env", ".env", True),
    ("src/.env", ".env", False),  # globs are relative to the project root
])
def test_glob_match(path: str, pattern: str, matches: bool) -> None:
    assert scope.glob_match(path, pattern) is matches


# a pattern's surrounding whitespace is trimmed, so names here have none at their ends
SEGMENT = st.text(st.characters(codec="utf-8", blacklist_characters="/\x00"), min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..") and s == s.strip())
REL = st.lists(SEGMENT, min_size=1, max_size=5).map("/".join)
LITERAL = SEGMENT.filter(lambda s: "*" not in s and "?" not in s)  # a folder name with no glob character in it


def as_regex(pattern: str) -> re.Pattern[str]:
    """The reference the glob semantics were first written as: ``**/`` any folders, ``**`` any
    text, ``*`` and ``?`` within one segment, and a match of a folder covering what is below it."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = pattern[i]
            out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


GLOB_PIECE = st.sampled_from(["*", "?", "**", "**/", "/", "a", "b", ".", "ab", "\n", "[", "x/"])
GLOB_PATH = st.lists(st.sampled_from(["a", "b", "/", ".", "ab", "\n", "*", "?", "[", "x"]), max_size=12).map("".join)


@given(pieces=st.lists(GLOB_PIECE, min_size=1, max_size=8), path=GLOB_PATH)
def test_a_wildcard_glob_matches_as_its_regex_does(pieces: List[str], path: str) -> None:
    """The matcher runs without ``re`` (a hook should not import it); its answer is the regex's."""
    pattern = "".join(pieces)
    assert scope._wild_match(path, pattern) is (as_regex(pattern).fullmatch(path) is not None), pattern


@given(pattern=st.lists(st.sampled_from(["*", "?", "a", "b", ".", "\n", "[", "]", "+"]), max_size=6).map("".join),
       name=st.lists(st.sampled_from(["a", "b", ".", "\n", "[", "]", "+", "*", "?"]), max_size=6).map("".join))
def test_a_segment_matches_as_its_regex_did(pattern: str, name: str) -> None:
    """The bind mounts' walk compared one folder name with one glob segment through this regex."""
    body = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)
    assert scope.segment_match(name, pattern) is (re.compile(body, re.DOTALL).fullmatch(name) is not None)


@pytest.mark.parametrize("pattern,path,expected", [
    ("src/**/*.py", "src/a.py", True), ("src/**/*.py", "src/x/y/a.py", True), ("src/**/*.py", "srca.py", False),
    ("src/*.py", "src/x/a.py", False), ("src/*", "src/x/a.py", True), ("**", "", True), ("a?c", "a/c", False),
    ("a**c", "a/b/c", True), ("**/b", "a/b/c", True), ("*/b", "a/c/b", False), ("a*", "ab\ncd", True),
])
def test_wildcard_globs(pattern: str, path: str, expected: bool) -> None:
    assert scope._wild_match(path, pattern) is expected
    assert (as_regex(pattern).fullmatch(path) is not None) is expected


@given(path=REL, folder=LITERAL)
def test_a_folder_glob_covers_exactly_the_folder_and_below(path: str, folder: str) -> None:
    expected = path == folder or path.startswith(folder + "/")
    assert scope.glob_match(path, f"{folder}/**") is expected
    assert scope.glob_match(path, f"{folder}/") is expected


@given(path=REL, cut=st.integers(0, 40), extra=st.sampled_from(["", "/", "/**", "x", " ", "./", "/x"]))
def test_a_pattern_without_wildcards_matches_as_its_regex_does(path: str, cut: int, extra: str) -> None:
    """glob_match answers such patterns without compiling a regex; the answer is the regex's.
    The patterns are cut from the path, so that prefixes, near misses and folders all come up."""
    pattern = ("./" if extra == "./" else "") + path[:cut] + ("" if extra == "./" else extra)
    assume("*" not in pattern and "?" not in pattern)
    cleaned = pattern.strip()
    while cleaned.endswith("/**") or cleaned.endswith("/"):
        cleaned = cleaned[:-3] if cleaned.endswith("/**") else cleaned[:-1]
    cleaned = cleaned[2:] if cleaned.startswith("./") else cleaned
    regex = cleaned != "" and as_regex(cleaned).fullmatch(path) is not None
    assert scope.glob_match(path, pattern) is regex


@given(path=REL)
def test_double_star_slash_matches_at_any_depth(path: str) -> None:
    assert scope.glob_match(path, "**/" + path.rsplit("/", 1)[-1])


@pytest.mark.parametrize("real,project,rel", [
    ("/p/src/a", "/p", "src/a"),
    ("/p", "/p", ""),
    ("/pp/a", "/p", None),  # a sibling whose name starts like the project
    ("/q/a", "/p", None),
    ("/p/a", "/p/", "a"),
    ("/", "/p", None),
])
def test_relative(real: str, project: str, rel: Optional[str]) -> None:
    assert scope.relative(real, project) == rel


@given(path=REL)
def test_relative_inverts_joining(path: str) -> None:
    assert scope.relative("/proj/" + path, "/proj") == path
    assert scope.relative("/proj-other/" + path, "/proj") is None


def test_resolve_expands_tilde_joins_cwd_and_follows_symlinks(tmp_path: Path) -> None:
    home, project, outside = tmp_path / "home", tmp_path / "p", tmp_path / "out"
    for folder in (home, project / "src", outside):
        folder.mkdir(parents=True)
    (project / "src" / "link").symlink_to(outside)
    real = os.path.realpath
    assert scope.resolve("~", str(project), str(home)) == real(home)
    assert scope.resolve("~/a", str(project), str(home)) == real(home / "a")
    assert scope.resolve("~user/a", str(project), str(home)) == real(project / "~user" / "a")  # not expanded
    assert scope.resolve("src/a", str(project), str(home)) == real(project / "src" / "a")
    assert scope.resolve(str(outside / "x"), str(project), str(home)) == real(outside / "x")
    assert scope.resolve("src/link/x", str(project), str(home)) == real(outside / "x")
    # '..' applies after the symlink, as the kernel does: src/link/.. is the parent of out/
    assert scope.resolve("src/link/../y", str(project), str(home)) == real(tmp_path / "y")


def test_allowed(tmp_path: Path) -> None:
    project = os.path.realpath(tmp_path / "p")
    home = os.path.realpath(tmp_path / "h")
    assert scope.allowed(f"{project}/src/a.py", project, home, ["src/**"])
    assert not scope.allowed(f"{project}/docs/a.md", project, home, ["src/**"])
    assert not scope.allowed("/elsewhere/src/a.py", project, home, ["src/**"])
    assert scope.allowed("/tmp/out/a.log", project, home, ["/tmp/out/**"])
    assert not scope.allowed("/tmp/outer/a.log", project, home, ["/tmp/out/**"])
    assert scope.allowed(f"{home}/notes/a.txt", project, home, ["~/notes/**"])
    assert scope.allowed(f"{project}/docs/a.md", project, home, ["src/**", "docs/**"])
    assert not scope.allowed(f"{project}/a", project, home, [])


def test_allowed_resolves_an_absolute_pattern_without_wildcards(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    project = os.path.realpath(tmp_path / "p")
    assert scope.allowed(os.path.realpath(real / "f"), project, "/h", [str(tmp_path / "alias")])


@pytest.mark.parametrize("text,folded", [
    (".BATON", ".baton"),
    ("\uff0ebaton", ".baton"),
    (".\uff42aton", ".baton"),
    ("\uff21PPROVAL.KEY", "approval.key"),
    ("Stra\u00dfe", "strasse"),
    ("\u0455rc", "\u0455rc"),  # Cyrillic dze is its own letter, not an s
])
def test_fold(text: str, folded: str) -> None:
    assert scope.fold(text) == folded


@pytest.mark.parametrize("path,folder,inside", [
    ("/p/.baton", "/p/.baton", True),
    ("/p/.baton/plan.json", "/p/.baton", True),
    ("/p/.baton/plan.json", "/p/.baton/", True),
    ("/p/.BATON/plan.json", "/p/.baton", True),
    ("/p/\uff0ebaton/x", "/p/.baton", True),
    ("/p/.baton2/x", "/p/.baton", False),
    ("/p/.baton.bak", "/p/.baton", False),
    ("/p/src/.baton", "/p/.baton", False),
    ("/p", "/p/.baton", False),
])
def test_under(path: str, folder: str, inside: bool) -> None:
    assert scope.under(path, folder) is inside
