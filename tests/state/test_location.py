"""Where a job's state lives: $BATON_DIR, $CLAUDE_PROJECT_DIR, the nearest ancestor with .baton/, ./.baton."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Dict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.state.location import Layout, job_nearby, pure, resolve

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/top/.baton/, tmp/top/mid/.baton/, tmp/top/mid/low/deep/, tmp/top/file-only/.baton (a file), tmp/bare/."""
    (tmp_path / "top" / ".baton").mkdir(parents=True)
    (tmp_path / "top" / "mid" / "low" / "deep").mkdir(parents=True)
    (tmp_path / "top" / "mid" / ".baton").mkdir()
    (tmp_path / "top" / "file-only").mkdir()
    (tmp_path / "top" / "file-only" / ".baton").write_text("not a folder")
    (tmp_path / "bare").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


# (case, env with {t} for the tree, cwd inside the tree, expected state dir, expected project root)
CASES = [
    ("BATON_DIR wins over everything", {"BATON_DIR": "{t}/elsewhere/state", "CLAUDE_PROJECT_DIR": "{t}/bare"},
     "top/mid/low", "elsewhere/state", "bare"),
    ("BATON_DIR alone: project is its parent", {"BATON_DIR": "{t}/elsewhere/state"}, "top/mid", "elsewhere/state",
     "elsewhere"),
    ("CLAUDE_PROJECT_DIR beats the ancestor walk", {"CLAUDE_PROJECT_DIR": "{t}/bare"}, "top/mid/low/deep",
     "bare/.baton", "bare"),
    ("nearest ancestor with .baton/", {}, "top/mid/low/deep", "top/mid/.baton", "top/mid"),
    ("the current directory itself", {}, "top/mid", "top/mid/.baton", "top/mid"),
    ("a .baton file is not a state folder", {}, "top/file-only", "top/.baton", "top"),
    ("no state anywhere: ./.baton", {}, "bare", "bare/.baton", "bare"),
    ("empty variables are ignored", {"BATON_DIR": "", "CLAUDE_PROJECT_DIR": ""}, "top/mid/low", "top/mid/.baton",
     "top/mid"),
]


@pytest.mark.parametrize("case, env, cwd, root, project", CASES, ids=[c[0] for c in CASES])
def test_resolve(tree: Path, case: str, env: Dict[str, str], cwd: str, root: str, project: str) -> None:
    filled = {k: v.format(t=tree) for k, v in env.items()}
    layout = resolve(filled, tree / cwd)
    assert layout == Layout(tree / root, tree / project)


def test_resolve_expands_home_in_baton_dir(sandbox: Sandbox, tmp_path: Path) -> None:
    layout = resolve({"BATON_DIR": "~/jobs/one"}, tmp_path)
    assert layout.root == sandbox.home / "jobs" / "one"


def test_resolve_defaults_to_the_environment_and_current_directory(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert resolve() == Layout(sandbox.state, sandbox.project)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert resolve() == Layout(tmp_path / ".baton", tmp_path)


def test_layout_names_the_files() -> None:
    layout = Layout(Path("/p/.baton"), Path("/p"))
    assert (layout.plan, layout.ledger, layout.snapshot, layout.lock, layout.torn) == (
        Path("/p/.baton/plan.json"), Path("/p/.baton/steps.jsonl"), Path("/p/.baton/state.json"),
        Path("/p/.baton/lock"), Path("/p/.baton/torn.log"))


# ---------------------------------------------------------------- the same order through the CLI


def _where_recorded(tree: Path) -> Dict[str, int]:
    """How many ledger records each state folder under ``tree`` holds."""
    return {str(p.parent.relative_to(tree)): len(p.read_bytes().splitlines())
            for p in sorted(tree.rglob("steps.jsonl"))}


@pytest.mark.parametrize("case, env, cwd, root, project", CASES, ids=[c[0] for c in CASES])
def test_cli_uses_the_same_state_folder(baton: Baton, tree: Path, case: str, env: Dict[str, str], cwd: str,
                                        root: str, project: str) -> None:
    filled = {k: v.format(t=tree) for k, v in env.items()}
    state = tree / root
    state.mkdir(parents=True, exist_ok=True)
    (state / "plan.json").write_text(json.dumps({"steps": ["here"]}))
    run = baton("record", "here", "done", case, cwd=tree / cwd, extra_env=filled)
    assert run.code == 0, run.err
    assert _where_recorded(tree) == {root: 1}
    brief = baton("brief", cwd=tree / cwd, extra_env=filled)
    assert brief.out.splitlines()[3] == f"LAST: here done {case}"


def test_cli_validate_runs_in_the_resolved_project_root(baton: Baton, tree: Path) -> None:
    state = tree / "elsewhere" / "state"
    state.mkdir(parents=True)
    (state / "plan.json").write_text(json.dumps({"steps": [{"id": "s", "validate": "pwd > where.txt"}]}))
    env = {"BATON_DIR": str(state), "CLAUDE_PROJECT_DIR": str(tree / "bare")}
    run = baton("record", "s", "done", cwd=tree / "top" / "mid", extra_env=env)
    assert run.code == 0, run.err
    assert (tree / "bare" / "where.txt").read_text().strip() == str(tree / "bare")


def test_cli_init_without_any_state_creates_dot_baton_here(baton: Baton, tree: Path) -> None:
    run = baton("init", "a", cwd=tree / "bare")
    assert run.code == 0 and str(tree / "bare" / ".baton" / "plan.json") in run.out
    assert (tree / "bare" / ".baton" / "plan.json").exists()
    assert not (tree / "top" / "mid" / ".baton" / "plan.json").exists()



# ---------------------------------------------------------------- the search's bounds


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """outer/.baton/plan.json (someone's job), outer/repo/.git (a git project), outer/repo/sub/deep,
    outer/plain/deeper (no git)."""
    (tmp_path / "outer" / ".baton").mkdir(parents=True)
    (tmp_path / "outer" / ".baton" / "plan.json").write_text(json.dumps({"steps": ["theirs"]}))
    (tmp_path / "outer" / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "repo" / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "outer" / "plain" / "deeper").mkdir(parents=True)
    return tmp_path / "outer"


def test_a_git_project_is_never_captured_by_a_job_above_it(nested: Path) -> None:
    layout = resolve({}, nested / "repo" / "sub" / "deep")
    assert layout == Layout(nested / "repo" / ".baton", nested / "repo")
    assert job_nearby(layout, {}) == nested / ".baton"


def test_a_job_inside_the_git_project_is_found_from_below(nested: Path) -> None:
    (nested / "repo" / "sub" / ".baton").mkdir()
    assert resolve({}, nested / "repo" / "sub" / "deep") == Layout(nested / "repo" / "sub" / ".baton",
                                                                   nested / "repo" / "sub")


def test_a_git_worktree_or_submodule_marker_file_counts_as_a_top_level(nested: Path) -> None:
    (nested / "plain" / ".git").write_text("gitdir: /elsewhere\n")
    assert resolve({}, nested / "plain" / "deeper").root == nested / "plain" / ".baton"


def test_without_git_the_search_climbs_as_before(nested: Path) -> None:
    assert resolve({}, nested / "plain" / "deeper") == Layout(nested / ".baton", nested)


def test_the_hooks_project_dir_is_searched_the_same_way(nested: Path) -> None:
    env = {"CLAUDE_PROJECT_DIR": str(nested / "repo" / "sub")}
    assert resolve(env, nested / "plain") == Layout(nested / "repo" / ".baton", nested / "repo")


def test_the_search_never_reaches_the_home_folder_from_below(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".baton").mkdir(parents=True)
    (home / "notes" / "today").mkdir(parents=True)
    env = {"HOME": str(home)}
    assert resolve(env, home / "notes" / "today") == Layout(home / "notes" / "today" / ".baton",
                                                            home / "notes" / "today")
    assert resolve(env, home) == Layout(home / ".baton", home)  # in the home folder itself it is that job


def test_the_search_never_enters_a_shared_folder(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / ".baton").mkdir(parents=True)
    (shared / "mine").mkdir()
    shared.chmod(0o1777)
    assert resolve({}, shared / "mine") == Layout(shared / "mine" / ".baton", shared / "mine")
    assert resolve({}, shared) == Layout(shared / ".baton", shared)


def test_cli_init_in_a_new_git_project_under_another_job_makes_its_own(baton: Baton, nested: Path) -> None:
    theirs = (nested / ".baton" / "plan.json").read_bytes()
    run = baton("init", "a", "b", cwd=nested / "repo" / "sub")
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        f"created {nested / 'repo' / '.baton' / 'plan.json'} with 2 steps; run `baton brief`",
        f"note: {nested / '.baton'} is another job's, outside this project ({nested / 'repo'}); it is not used here"]
    forced = baton("init", "--force", "x", cwd=nested / "repo")
    assert forced.code == 0, forced.err
    assert (nested / ".baton" / "plan.json").read_bytes() == theirs
    assert json.loads((nested / "repo" / ".baton" / "plan.json").read_text()) == {"steps": ["x"]}


def test_cli_without_a_job_names_the_one_it_does_not_use(baton: Baton, nested: Path) -> None:
    run = baton("brief", cwd=nested / "repo")
    assert run.code == 2 and run.out == ""
    assert run.err == (f"baton: {nested / 'repo' / '.baton' / 'plan.json'}: no job here; {nested / '.baton'} is "
                       "another job's, outside this project; start one with `baton init STEP...` (the steps in "
                       "order, e.g. `baton init fetch build test`) or `baton init --plan FILE`\n")


# ---------------------------------------------------------------- paths as strings, as pathlib gives them


@given(st.lists(st.sampled_from(["", "/", "//", "///", ".", "..", "a", "b c", ".baton", "x/./y", "~"]), max_size=8)
       .map("".join))
def test_pure_is_what_pathlib_prints(text: str) -> None:
    assert pure(text) == str(PurePosixPath(text))


@pytest.mark.parametrize("root, project", [("/p/.baton", "/p"), ("/p//.baton/", "/p/."), (".baton", "."),
                                           (".", ".."), ("/", "/")])
def test_a_layout_made_of_strings_is_the_one_made_of_paths(root: str, project: str) -> None:
    layout = Layout(root, project)
    assert layout == Layout(Path(root), Path(project))
    assert (layout.root, layout.project) == (Path(root), Path(project))
    assert (layout.state_dir, layout.project_dir) == (str(Path(root)), str(Path(project)))
    for name in ("plan.json", "steps.jsonl", "state.json", "counters.json", "hooks.lock", "events.jsonl", "lock"):
        assert layout.file(name) == str(layout.root / name)
    assert (layout.plan, layout.ledger, layout.counters, layout.hooks_lock) == (
        layout.root / "plan.json", layout.root / "steps.jsonl", layout.root / "counters.json",
        layout.root / "hooks.lock")


def test_has_plan_answers_as_path_exists_but_for_a_link_that_leads_nowhere(tmp_path: Path) -> None:
    cases = {"plan": tmp_path / "a" / ".baton", "none": tmp_path / "b" / ".baton",
             "file in the way": tmp_path / "c" / ".baton", "loop": tmp_path / "d" / ".baton"}
    (cases["plan"]).mkdir(parents=True)
    (cases["plan"] / "plan.json").write_text("{}")
    (tmp_path / "c").mkdir()
    cases["file in the way"].write_text("not a folder")
    (tmp_path / "d").mkdir()
    cases["loop"].mkdir()
    (cases["loop"] / "plan.json").symlink_to(cases["loop"] / "plan.json")
    for name, state in cases.items():
        layout = Layout(state, state.parent)
        # a plan.json that is a link loop is a broken job, not no job (issue 25): the gate must refuse
        assert layout.has_plan() is (layout.plan.exists() or name == "loop"), state
    assert Layout(cases["plan"], tmp_path / "a").has_plan()
