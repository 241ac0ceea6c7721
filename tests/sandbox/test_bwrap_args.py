"""The sandbox's arguments: write globs turned into binds (exact, widened with islands, refused), the
never-writable paths, and bubblewrap's arguments in the order that makes them safe."""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import List

import pytest

from store.sandbox import bwrap_args, mounts
from store.sandbox.mounts import Globs, could_contain
from store.sandbox.writable import never_globs, plan_never, plan_writes


def tree(root: Path, *paths: str) -> Path:
    for rel in paths:
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rel)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tree(tmp_path / "p", "src/a.py", "src/pkg/b.py", "docs/a.md", "docs/guide.txt", "docs/sub/deep.md",
                "README.md", "CHANGELOG.md", ".baton/plan.json", "lib/x/y.py", "lib/x/data.csv", "lib/z.txt")


def rel(project: Path, paths: List[str]) -> List[str]:
    return sorted(os.path.relpath(p, project) for p in paths)


def writes(project: Path, *globs: str) -> plan_writes:  # type: ignore[valid-type]
    return plan_writes(Globs(str(project), str(project.parent / "home"), globs))


@pytest.mark.parametrize("folder, pattern, expected", [
    (["docs"], ["docs", "*.md"], True),
    (["docs", "sub"], ["docs", "*.md"], False),
    (["lib", "x", "y"], ["lib", "**", "*.py"], True),
    ([], ["*.md"], True),
    (["src"], ["docs", "*.md"], False),
    (["a"], ["a"], False),  # the glob is the folder itself: covered, nothing below to look for
])
def test_could_contain(folder: List[str], pattern: List[str], expected: bool) -> None:
    assert could_contain(folder, pattern) is expected


def test_a_folder_glob_is_bound_exactly(project: Path) -> None:
    plan = writes(project, "src/**")
    assert rel(project, plan.rw) == ["src"] and plan.islands == [] and plan.walks == []


def test_a_glob_inside_a_folder_widens_to_it_with_read_only_islands(project: Path) -> None:
    plan = writes(project, "docs/*.md")
    assert rel(project, plan.rw) == ["docs"]
    assert rel(project, plan.islands) == ["docs/guide.txt", "docs/sub"]
    (walk,) = plan.walks
    assert rel(project, walk.covered) == ["docs/a.md"] and rel(project, walk.folders) == ["docs"]


def test_a_deep_glob_walks_the_folders_that_may_hold_matches(project: Path) -> None:
    plan = writes(project, "lib/**/*.py")
    assert rel(project, plan.rw) == ["lib"]
    assert rel(project, plan.islands) == ["lib/x/data.csv", "lib/z.txt"]


def test_a_top_level_glob_widens_to_the_project_and_islands_everything_else(project: Path) -> None:
    plan = writes(project, "*.md")
    assert rel(project, plan.rw) == ["."]
    assert rel(project, plan.islands) == [".baton", "docs", "lib", "src"]
    assert rel(project, plan.walks[0].covered) == ["CHANGELOG.md", "README.md"]


def test_a_folder_not_made_yet_is_created_by_no_one_but_may_appear(project: Path) -> None:
    plan = writes(project, "build/**")
    assert rel(project, plan.rw) == ["."] and "build" not in rel(project, plan.islands)
    assert not (project / "build").exists()


def test_an_existing_file_is_bound_in_place(project: Path) -> None:
    assert rel(project, writes(project, "CHANGELOG.md").rw) == ["CHANGELOG.md"]


def test_writes_none_and_nothing(project: Path) -> None:
    assert rel(project, writes(project, "**").rw) == ["."]
    assert writes(project).rw == []


def test_globs_that_would_reach_outside_through_a_symlink_or_the_system_are_refused(project: Path) -> None:
    (project / "out").symlink_to(project.parent)
    plan = writes(project, "out/**", "/", "/proc/**", "/dev/x")
    assert plan.rw == [] and len(plan.notes) == 4


def test_too_much_to_sort_binds_only_the_existing_covered_entries(project: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mounts, "MAX_VISITS", 3)
    plan = writes(project, "*.md")
    assert "." not in rel(project, plan.rw) and plan.notes


def test_never_writable_paths_inside_writable_areas(project: Path) -> None:
    tree(project, ".git/hooks/", ".git/config", "secrets/token", ".claude/")
    home = str(project.parent / "home")
    writable = [str(project)]
    never = plan_never(never_globs(str(project), home, ["secrets/**", "*.pem"], writable), writable)
    assert rel(project, never.ro) == [".claude", ".git/config", ".git/hooks", "secrets"]
    assert {".mcp.json", ".envrc", ".git/commondir"} <= set(rel(project, never.absent))
    assert [w.root for w in never.walks] == [str(project)]  # *.pem: new ones are looked for after the command


def test_home_files_count_only_when_a_writable_area_reaches_the_home_folder(project: Path) -> None:
    home = str(project.parent / "home")
    assert not any(p.startswith(home) for p in never_globs(str(project), home, [], [str(project)]).patterns)
    assert any(p.endswith("/.bashrc") for p in never_globs(str(project), home, [], [home + "/notes"]).patterns)


def policy(project: Path, **fields: object) -> bwrap_args.Policy:
    home = project.parent / "home"
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    values = {"writes": ("src/**",), "protect": (), **fields}
    return bwrap_args.Policy(str(project), str(project / ".baton"), str(home / ".config" / "baton"), str(home),
                          **values)  # type: ignore[arg-type]


def test_bwrap_arguments_are_in_the_order_that_makes_them_safe(project: Path) -> None:
    tree(project, ".git/config")
    args = bwrap_args.build(policy(project), lock=str(project / ".baton" / "x.lock")).args
    text = " ".join(args)
    assert args[:len(bwrap_args.NAMESPACES)] == list(bwrap_args.NAMESPACES) and "--cap-drop ALL" in text
    assert "--unshare-net" not in args
    root = text.index("--ro-bind / /")
    src = text.index(f"--bind {project}/src {project}/src")
    baton = text.index(f"--ro-bind {project}/.baton {project}/.baton")
    key = text.index(f"--tmpfs {project.parent}/home/.config/baton --remount-ro")
    hooks = text.index(f"--ro-bind {project}/.git/hooks")
    assert root < src < hooks < baton < key, "read-only mounts must come after the writable ones they cover"
    assert text.index(f"--bind {project}/.git {project}/.git") < hooks
    assert args[-2:] == ["--lock-file", str(project / ".baton" / "x.lock")]
    assert (project.parent / "home/.config/baton").is_dir()


def test_mount_points_are_made_only_in_writable_areas_and_tidied_when_no_run_needs_them(project: Path) -> None:
    from store.sandbox import afterrun, runs

    tree(project, ".git/config", ".git/hooks/")
    bwrap_args.build(policy(project))  # src/** and git rw: .git's missing folders, not .claude (the root is read-only)
    made = [project / ".git" / sub for sub in ("info", "modules", "worktrees")]
    assert all(p.is_dir() for p in made) and not (project / ".claude").exists()
    text = " ".join(bwrap_args.build(policy(project, writes=None)).args)  # the whole project: .claude too
    assert (project / ".claude").is_dir() and f"--ro-bind {project}/.claude {project}/.claude" in text
    runs.start(str(project / ".baton"), "other", {"command": "x"})  # a call not back yet: it may need them
    afterrun.tidy(str(project / ".baton"))
    assert (project / ".claude").is_dir()
    runs.finish(str(project / ".baton"), "other")
    (project / ".git" / "info" / "exclude").write_text("mine\n")  # no longer empty: the person's now
    afterrun.tidy(str(project / ".baton"))
    assert not any(p.exists() for p in (project / ".claude", *made[1:])) and (project / ".git/hooks").is_dir()
    assert (project / ".git" / "info" / "exclude").exists()


def test_a_step_that_only_reads_gets_no_writable_project_and_no_network(project: Path) -> None:
    args = bwrap_args.build(policy(project, writes=(), git="ro", network="none")).args
    text = " ".join(args)
    assert "--unshare-net" in args and f"--bind {project}" not in text


def test_private_caches_point_every_package_tool_into_the_job(project: Path) -> None:
    p = policy(project, caches="private")
    text = " ".join(bwrap_args.build(p).args)
    assert f"--setenv PIP_CACHE_DIR {p.job_dir}/cache/pip" in text
    assert f"--bind {project.parent}/home/.cache {project.parent}/home/.cache" not in text


def test_the_job_folder_is_one_per_state_folder(project: Path) -> None:
    home = str(project.parent / "home")
    assert bwrap_args.job_folder(str(project / ".baton"), home) == bwrap_args.job_folder(str(project / ".baton"), home)
    assert bwrap_args.job_folder(str(project / ".baton"), home) != bwrap_args.job_folder(str(project / "x"), home)


def test_the_job_folder_keeps_its_name_across_versions(project: Path) -> None:
    # CRC-32 then Adler-32 of the resolved path, as baton has always named it: a job's private /tmp
    # survives an upgrade (the checksums base/checksums.py computed by hand until zlib replaced it)
    raw = os.path.realpath(project / ".baton").encode()
    name = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    assert bwrap_args.job_folder(str(project / ".baton"), "/h") == f"/h/.cache/baton/jobs/{name}"
