"""Globs turned into mounts in a big project: the walks' compiled matching means what the gate's globs
mean, a folder glob is bound whole, the sandbox's size stays bounded however many entries the
project has, and a walk cut short makes less writable, never removes a file that was there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.base import paths
from store.sandbox import afterrun, bwrap_args, mounts, writable
from store.sandbox.mounts import Globs, glob_regex, whole_folder

PIECES = st.sampled_from(["*", "?", "**", "**/", "/", "a", "b", ".", "ab", "\n", "[", "x/", "+", "(", "\\"])
PATHS = st.lists(st.sampled_from(["a", "b", "/", ".", "ab", "\n", "*", "?", "[", "x", "+", "("]), min_size=1,
                 max_size=12).map("".join)


@pytest.mark.parametrize("pattern, path", [
    ("a*b", "a/b"), ("*.md", "docs/x.md"), ("a?b", "a/b"), ("**/*.py", "x.py"), ("**/*.py", "a/b/x.py"),
    ("src/**", "src"), ("src", "src/a/b"), ("a**b", "a/x/b"), ("a/**/b", "a/b"), ("a+(b", "a+(b/c"), ("[ab]", "a"),
    ("a\\b", "a\\b"), ("*", ".hidden"), ("x/", "x/y"),
])
def test_a_walk_matches_what_the_gates_globs_match_in_these_cases(pattern: str, path: str) -> None:
    test_a_walk_matches_what_the_gates_globs_match.hypothesis.inner_test([pattern], path)  # type: ignore[attr-defined]


@settings(max_examples=1000)
@given(patterns=st.lists(st.lists(PIECES, min_size=1, max_size=7).map("".join), min_size=1, max_size=3), path=PATHS)
def test_a_walk_matches_what_the_gates_globs_match(patterns: List[str], path: str) -> None:
    project = "/p"
    rel = "/".join(part for part in path.split("/") if part not in ("", ".", ".."))
    if not rel:
        return
    globs = Globs(project, "/home", patterns)
    expected = paths.allowed(f"{project}/{rel}", project, "/home", globs.patterns)
    assert globs.matches(f"{project}/{rel}") == expected  # one by one, as a small walk matches
    relative = glob_regex(g for g in globs.patterns if not g.startswith("/"))  # compiled, as a big walk matches
    absolute = glob_regex(g if "*" in g else os.path.realpath(g) for g in globs.patterns if g.startswith("/"))
    compiled = any(x is not None and x.match(p) is not None for x, p in ((relative, rel), (absolute, f"/p/{rel}")))
    assert compiled == expected


@pytest.mark.parametrize("glob, folder", [
    ("**", ""), ("src/**/*", "src"), ("src/*", "src"), ("src/**/**", "src"), ("/opt/x/**/*", "/opt/x"),
    ("src/*.py", None), ("docs/**/*.md", None), ("src", None), ("*.md", None), ("a/*/b", None),
])
def test_whole_folder(glob: str, folder: Optional[str]) -> None:
    assert whole_folder(glob) == folder


def big(root: Path, files: int) -> Path:
    (root / ".baton").mkdir(parents=True)
    for i in range(files):
        (root / f"f{i}.txt").write_text("")
    (root / "keys").mkdir()
    (root / "keys" / "site.pem").write_text("secret")
    return root


def built(project: Path, writes: object, protect: Tuple[str, ...] = ()) -> bwrap_args.Built:
    home = project.parent / "home"
    policy = bwrap_args.Policy(str(project), str(project / ".baton"), str(home / ".config/baton"), str(home),
                            writes, protect)  # type: ignore[arg-type]
    return bwrap_args.build(policy)


@pytest.mark.parametrize("writes, protect", [
    (None, ()), (("*.txt",), ()), (("*.md",), ()), (("out/**",), ()), (None, ("*.txt",)), (("src/**",), ("**/*",)),
])
def test_the_sandbox_stays_small_however_big_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         writes: object, protect: Tuple[str, ...]) -> None:
    monkeypatch.setattr(writable, "MAX_WALK_MOUNTS", 20)  # 3,000 files against 20 binds: as 150,000 against 1,000
    monkeypatch.setattr(mounts, "MAX_ISLANDS", 20)
    project = big(tmp_path / "p", 3000)
    found = built(project, writes, protect)
    assert len(found.args) < 300, found.notes


def test_a_whole_project_step_binds_the_project_once(tmp_path: Path) -> None:
    project = big(tmp_path / "p", 6000)
    found = built(project, None)
    assert f"--bind {project} {project}" in " ".join(found.args) and len(found.args) < 300 and not found.notes


def test_a_glob_with_too_many_existing_files_gets_none_rather_than_a_failed_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writable, "MAX_WALK_MOUNTS", 10)
    monkeypatch.setattr(mounts, "MAX_VISITS", 50)
    project = big(tmp_path / "p", 100)
    found = built(project, ("*.txt",))
    assert not any(p.endswith(".txt") for p in found.writable) and "nothing there is writable" in found.notes[0]


def test_a_protect_walk_cut_short_makes_its_folder_read_only_and_removes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writable, "NEVER_VISITS", 100)
    project = big(tmp_path / "p", 300)  # the walk looks at f*.txt before keys/ and stops
    home = project.parent / "home"
    policy = bwrap_args.Policy(str(project), str(project / ".baton"), str(home / ".config/baton"), str(home), None,
                            ("**/*.pem",))
    found = bwrap_args.build(policy)
    text = " ".join(found.args)
    assert text.rindex(f"--ro-bind {project} {project}") > text.index(f"--bind {project} {project}")
    assert "read-only for Bash here" in " ".join(found.notes)
    assert afterrun.check(found.after_check(policy))["removed"] == []
    assert (project / "keys" / "site.pem").read_text() == "secret"


def test_many_protected_files_make_their_folders_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writable, "MAX_WALK_MOUNTS", 20)
    project = big(tmp_path / "p", 0)
    for i in range(50):
        (project / "keys" / f"k{i}.pem").write_text("")
    (project / "src").mkdir()
    found = built(project, None, ("**/*.pem",))
    assert f"--ro-bind {project}/keys {project}/keys" in " ".join(found.args)
    assert os.path.join(project, "src") not in found.never.ro and len(found.args) < 300
