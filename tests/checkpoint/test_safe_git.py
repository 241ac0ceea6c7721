"""Issue 29 item 3: ``baton record`` runs git outside the sandbox, in the project the model writes;
the git it runs must run nothing the project holds. Each attack plants what git would run (an
fsmonitor in a submodule's config or in a config file the repository includes, a clean filter
named by ``.gitattributes``, an external diff in the environment), then records through the real
CLI and checks that nothing ran, that the record still carries the checkpoint, and, as a control,
that the person's own ``git status`` would have run it (so the test can fail)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List

import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

GIT_ID = ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "protocol.file.allow=always"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def hook_script(marker: Path) -> str:
    """A program that leaves ``marker`` when it runs (as the model's code would do anything)."""
    return f"sh -c 'echo ran >> {marker}; exit 1'"


def submodule_fsmonitor(project: Path, marker: Path) -> None:
    """A nested repository registered in the index; the model writes its .git/config."""
    vendor = project / "vendor"
    vendor.mkdir()
    git(vendor, "init", "-q")
    (vendor / "lib.c").write_text("int x;\n")
    git(vendor, "add", "lib.c")
    git(vendor, "commit", "-qm", "vendor")
    git(project, "add", "vendor")
    git(project, "commit", "-qm", "add vendor")
    (vendor / "lib.c").write_text("int y;\n")  # dirty, so that status asks it
    with (vendor / ".git" / "config").open("a") as handle:
        handle.write(f"[core]\n\tfsmonitor = \"{hook_script(marker)}\"\n")


def included_fsmonitor(project: Path, marker: Path) -> None:
    """The person's repository includes a file of the project; the model writes that file."""
    git(project, "config", "include.path", "../tools/git.cfg")
    (project / "tools").mkdir()
    (project / "tools" / "git.cfg").write_text(f"[core]\n\tfsmonitor = \"{hook_script(marker)}\"\n")


def included_filter(project: Path, marker: Path) -> None:
    """A clean filter in an included file, named by a .gitattributes the model writes."""
    git(project, "config", "include.path", "../tools/git.cfg")
    (project / "tools").mkdir()
    (project / "tools" / "git.cfg").write_text(f"[filter \"x\"]\n\tclean = \"{hook_script(marker)}\"\n")
    (project / ".gitattributes").write_text("*.c filter=x\n")
    git(project, "add", ".gitattributes")
    git(project, "commit", "-qm", "attributes")
    (project / "src" / "main.c").write_text("int main(void) { return 1; }\n")


def included_textconv(project: Path, marker: Path) -> None:
    """A textconv driver in an included file: a step's patch id diffs the tree."""
    git(project, "config", "include.path", "../tools/git.cfg")
    (project / "tools").mkdir()
    (project / "tools" / "git.cfg").write_text(f"[diff \"x\"]\n\ttextconv = \"{hook_script(marker)}\"\n"
                                                f"[core]\n\tpager = {hook_script(marker)}\n")
    (project / ".gitattributes").write_text("*.c diff=x\n")
    git(project, "add", ".gitattributes")
    git(project, "commit", "-qm", "attributes")
    (project / "src" / "main.c").write_text("int main(void) { return 2; }\n")


ATTACKS: Dict[str, Callable[[Path, Path], None]] = {
    "fsmonitor in a submodule": submodule_fsmonitor, "fsmonitor in an included file": included_fsmonitor,
    "clean filter": included_filter, "textconv": included_textconv}


@pytest.fixture
def project(baton: Baton, sandbox: Sandbox, tmp_path: Path) -> Path:
    project = sandbox.project
    (project / "src").mkdir()
    (project / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    git(project, "init", "-q")
    git(project, "add", "src")
    git(project, "commit", "-qm", "start")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": ["build", "ship"]}))
    assert baton("init", "--plan", str(plan)).code == 0
    return project


def ledger(project: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (project / ".baton" / "steps.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_baton_record_runs_nothing_the_project_planted_for_git(attack: str, baton: Baton, project: Path,
                                                                tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert baton("record", "build", "running", "start").code == 0
    ATTACKS[attack](project, marker)
    if marker.exists():
        marker.unlink()  # the setup's own commits ran it, as the person's git would
    before = sorted(p.name for p in tmp_path.iterdir())
    env = {**os.environ, "GIT_EXTERNAL_DIFF": hook_script(marker), "GIT_PAGER": hook_script(marker)}
    done = baton("record", "build", "done", "built", env=env)
    assert done.code == 0, done
    assert not marker.exists(), f"baton's git ran the project's code: {marker.read_text()}"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    last = ledger(project)[-1]
    revision = last.get("revision") or {}
    assert last["status"] == "done" and revision.get("commit"), last
    if attack in ("clean filter", "textconv"):  # a tracked file changed: the checkpoint still sees it
        assert revision.get("dirty") is True and (last.get("change") or {}).get("patch_id"), last
    subprocess.run(["git", "status"], cwd=project, capture_output=True, env=env)  # the control: git as a person runs it
    subprocess.run(["git", "diff", "HEAD"], cwd=project, capture_output=True, env=env)
    assert marker.exists(), "the attack would not have run anyway: this test could not fail"
