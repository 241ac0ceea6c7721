"""The after-check: what the mounts cannot stop (new files in a widened folder, never-writable names
that did not exist, new matches of a protect glob, a replaced symlink) is undone after the command,
without following a symlink, and reported in one line."""

from __future__ import annotations

import os
from pathlib import Path

from store.sandbox import afterrun, bwrap_args


def job(tmp_path: Path) -> Path:
    project = tmp_path / "p"
    for rel in ("docs/a.md", "docs/keep.txt", "src/x.py", ".baton/plan.json", "secrets/t.pem"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(rel)
    (project / "docs" / "link").symlink_to("../src")
    (tmp_path / "home" / ".cache").mkdir(parents=True)
    return project


def record(project: Path, writes: object, protect: tuple = ()) -> dict:  # type: ignore[type-arg]
    home = project.parent / "home"
    policy = bwrap_args.Policy(str(project), str(project / ".baton"), str(home / ".config/baton"), str(home),
                            writes, protect)  # type: ignore[arg-type]
    return bwrap_args.build(policy).after_check(policy)


def test_new_files_outside_a_widened_glob_are_removed_and_the_rest_kept(tmp_path: Path) -> None:
    project = job(tmp_path)
    run = record(project, ("docs/*.md",))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target").write_text("keep me")
    (project / "docs" / "b.md").write_text("new, covered")
    (project / "docs" / "new.txt").write_text("new, not covered")
    (project / "docs" / "d").mkdir()
    (project / "docs" / "d" / "x.md").write_text("not covered: * stays in one folder")
    (project / "docs" / "out").symlink_to(outside / "target")
    (project / "docs" / "link").unlink()
    (project / "docs" / "link").symlink_to("../.baton")
    found = afterrun.check(run)
    assert sorted(os.path.relpath(p, project) for p in found["removed"]) == ["docs/d", "docs/new.txt", "docs/out"]
    assert [os.path.relpath(p, project) for p in found["restored"]] == ["docs/link"]
    assert os.readlink(project / "docs" / "link") == "../src"
    assert (project / "docs" / "b.md").exists() and (project / "docs" / "keep.txt").exists()
    assert (outside / "target").read_text() == "keep me", "removing a symlink never touches its target"
    line = afterrun.report(found, str(project))
    assert line.startswith("baton's sandbox removed docs/") and "put back the symlink docs/link" in line


def test_never_writable_names_and_new_protected_files_are_removed(tmp_path: Path) -> None:
    project = job(tmp_path)
    run = record(project, None, ("**/*.pem",))
    (project / ".mcp.json").write_text("{}")
    (project / ".envrc").write_text("evil")
    (project / "src" / "new.pem").write_text("key")
    (project / "src" / "fine.txt").write_text("fine")
    found = afterrun.check(run)
    assert sorted(os.path.relpath(p, project) for p in found["removed"]) == [".envrc", ".mcp.json", "src/new.pem"]
    assert (project / "secrets" / "t.pem").exists() and (project / "src" / "fine.txt").exists()


def test_nothing_to_undo_says_nothing(tmp_path: Path) -> None:
    project = job(tmp_path)
    found = afterrun.check(record(project, ("src/**",)))
    assert found == {"removed": [], "restored": []} and afterrun.report(found, str(project)) == ""
