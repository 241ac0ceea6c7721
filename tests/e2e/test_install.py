"""Installing baton as the README says: from a copy of the repository, which is its own marketplace.

The walk-through tests COMMITTED code only: the repository is cloned (`git clone` of HEAD) into
a temporary folder, as a user's copy would be, so uncommitted edits in the working tree are not
part of it; run it after committing. It runs the README's Set-up commands word for word in a
fresh HOME (with `claude` on the PATH), then the README's `baton init` and a job in `claude -p`
with the installed plugin only. The size test installs from a clone that has run the tests,
`dev/test` and all: what `claude plugin install` copies must stay the plugin's own files.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from docpages import section

from .briefs import bash, injected
from .driver import REPO, Claude
from .fakeapi import FakeAPI, text, tool_results
from .jobstate import Turns, ledger

README = (REPO / "README.md").read_text(encoding="utf-8")
CACHE_NAMES = {".cache", ".venv", "venv", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache",
               ".hypothesis", "claude-code"}
SMALL = 4 * 1024 * 1024  # the committed files are 2.7 MB, with the bytecode a test run leaves beside them


def setup_commands() -> list[str]:
    block = re.findall(r"```sh\n(.*?)```", section("Set-up"), re.S)[0]
    return [line for line in block.splitlines() if line.strip()]


def first_job_commands() -> list[str]:
    """The commands of the ```sh blocks of "A first job", in order (the blocks sit in a list)."""
    blocks = re.findall(r"```sh\n(.*?)```", section("A first job"), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def session_lines() -> list[str]:
    return re.findall(r"```text\n(.*?)```", section("A short session"), re.S)[0].splitlines()


def shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    return done


def user_env(claude: Claude, tmp_path: Path) -> dict[str, str]:
    """The driver's environment with `claude` and ~/.local/bin on the PATH, as a user's shell has."""
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    if not (shim / "claude").exists():
        (shim / "claude").symlink_to(claude.exe)
    env = claude.env()
    env["PATH"] = os.pathsep.join([str(shim), str(claude.home / ".local" / "bin"), env.get("PATH", "")])
    return env


def tree_size(root: Path) -> tuple[int, list[tuple[int, str]]]:
    """Total bytes under `root` (links not followed) and the largest top-level entries."""
    sizes: dict[str, int] = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            top = path.relative_to(root).parts[0]
            sizes[top] = sizes.get(top, 0) + path.stat().st_size
    return sum(sizes.values()), sorted(((n, t) for t, n in sizes.items()), reverse=True)[:5]


def installed_copy(home: Path) -> Path:
    record = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    [entry] = record["plugins"]["baton@baton"]
    return Path(entry["installPath"])


@pytest.fixture(params=["home beside the test", "home directly under /tmp"])
def user(request: pytest.FixtureRequest, claude: Claude, fake_api: FakeAPI) -> Iterator[Claude]:
    """The person who follows the README: HOME wherever the tests' folders are, and HOME in a
    folder of its own directly under /tmp, whatever TMPDIR says."""
    if request.param == "home beside the test":
        yield claude
        return
    top = Path(tempfile.mkdtemp(prefix="baton-readme-", dir="/tmp"))
    person = Claude(claude.exe, fake_api.base_url, top / "home")
    try:
        yield person
    finally:
        person.kill_all()
        shutil.rmtree(top, ignore_errors=True)


def test_the_readme_walk_through_from_a_fresh_clone(user: Claude, fake_api: FakeAPI, tmp_path: Path) -> None:
    claude = user
    copy = tmp_path / "baton"
    subprocess.run(["git", "clone", "-q", str(REPO), str(copy)], check=True, timeout=120)
    env = user_env(claude, tmp_path)
    for command in setup_commands():  # word for word, in the copy, as the README says
        shell(command, copy, env)

    assert (claude.home / ".local" / "bin" / "baton").resolve() == (copy / "bin" / "baton").resolve()
    copied = installed_copy(claude.home)
    assert copied == claude.home / ".claude" / "plugins" / "cache" / "baton" / "baton" / "0.1.0"
    assert "`~/.claude/plugins/cache/baton/baton/0.1.0/`" in section("Set-up")

    # The README's session: `baton init` in a new git project, from the PATH the Set-up made.
    lines = session_lines()
    project = tmp_path / "my-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    [init] = [line[2:] for line in lines if line.startswith("$ baton init ")]
    made = shell(init, project, env)
    after = lines[lines.index(f"$ {init}") + 1:]
    shown = after[:next(i for i, line in enumerate(after) if line.startswith("$ "))]
    assert made.stdout == "".join(line.replace("/home/me/my-project", str(project)) + "\n" for line in shown)

    # ... and the job in `claude -p`, with the installed plugin only (no --plugin-dir).
    steps = init.split()[2:]
    where = bash("type -ap baton")  # the plugin's bin/ comes last on the Bash tool's PATH
    fake_api.script = Turns([where], *[[bash(f'baton record {s} done "{s} finished"')] for s in steps],
                            [text("done")])
    [prompt] = re.findall(r'^\$ claude "(.*)"$', "\n".join(lines), re.M)[:1]
    run = claude.run(prompt, cwd=project)

    assert run.returncode == 0, run.stderr
    first = fake_api.requests_main()[0]
    [context] = injected(first)
    assert context.line("NEXT: ") == steps[0]
    assert [(r["step"], r["status"]) for r in ledger(project)] == [(s, "done") for s in steps]
    assert all(not r.is_error for req in fake_api.requests_main() for r in tool_results(req))
    found = tool_results(fake_api.requests_main()[1])[0].text.split()
    assert found[-1] == str(copy / "bin" / "baton")  # the plugin runs from the copy it was installed from
    brief = shell("baton brief", project, env).stdout
    assert "NEXT: (all steps complete - stop)" in brief

    # "A first job": the same plan, then every other command it gives, word for word.
    quick = first_job_commands()
    assert quick[0] == init and len(quick) >= 5, quick
    for command in quick[1:]:
        shell(command, project, env)
    assert (project / "report.html").stat().st_size > 0


def test_an_install_from_a_clone_that_ran_the_tests_copies_only_the_plugin(
    claude: Claude, tmp_path: Path
) -> None:
    """`dev/test` runs for real in a fresh clone (lint, types, the plugin validator and a few
    tests), with the installed tools shared through BATON_DEV_CACHE; then the README's install
    from that clone must copy the plugin's files and nothing the test run left behind."""
    shared = REPO / ".cache"
    assert shared.exists(), "run dev/test (or dev/cache-dir and dev/install-claude-code) first"
    copy = tmp_path / "baton"
    subprocess.run(["git", "clone", "-q", str(REPO), str(copy)], check=True, timeout=120)
    env = dict(user_env(claude, tmp_path), BATON_DEV_CACHE=str(shared.resolve()))
    checksum = subprocess.run(["bash", "-c", 'printf "%s" "$1" | cksum', "-", str(copy)],
                              capture_output=True, text=True, check=True).stdout.split()[0]
    tools = shared.resolve() / "tools" / checksum  # dev/test's caches for this clone
    try:
        ran = subprocess.run([str(copy / "dev" / "test"), "tests/test_docs.py"], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=900)
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        assert (copy / ".cache").is_symlink() and tools.is_dir()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy,
                                capture_output=True, text=True, check=True).stdout
        assert status == "", f"the tests left the clone dirty:\n{status}"
        shell(setup_commands()[0], copy, env)
    finally:
        shutil.rmtree(tools, ignore_errors=True)
        with contextlib.suppress(OSError):
            tools.parent.rmdir()  # only when no other checkout keeps its caches there

    copied = installed_copy(claude.home)
    total, largest = tree_size(copied)
    assert total < SMALL, f"the installed copy holds {total} bytes; largest: {largest}"
    names = {p.name for p in copied.rglob("*")}
    assert not names & CACHE_NAMES, names & CACHE_NAMES
    assert (copied / "hooks" / "hooks.json").is_file() and (copied / "bin" / "baton").is_file()


def test_the_node_version_the_readme_asks_for_is_what_claude_code_declares(claude_exe: Path) -> None:
    package = json.loads((claude_exe.parent.parent / "package.json").read_text())
    wanted = re.fullmatch(r">=(\d+)(\.\d+)*", package["engines"]["node"])
    assert wanted, package["engines"]
    assert f"Node.js {wanted.group(1)} or newer" in README
    installer = (REPO / "dev" / "install-claude-code").read_text()
    assert f"node_major={wanted.group(1)} " in installer


def test_outside_the_declared_claude_code_range_the_install_says_so_and_baton_still_runs(
    claude: Claude, fake_api: FakeAPI, tmp_path: Path
) -> None:
    """What the README's "What you need" says of another Claude Code version, shown the other way
    round: a copy whose manifest declares a range the pinned CLI is outside of."""
    copy = tmp_path / "baton"
    subprocess.run(["git", "clone", "-q", str(REPO), str(copy)], check=True, timeout=120)
    manifest = copy / ".claude-plugin" / "plugin.json"
    declared = json.loads(manifest.read_text())
    assert f"the plugin declares `{declared['engines']['claude-code']}`" in " ".join(section("What you need").split())
    declared["engines"]["claude-code"] = ">=99.0.0"
    manifest.write_text(json.dumps(declared))
    env = user_env(claude, tmp_path)
    installed = shell(setup_commands()[0], copy, env)
    said = " ".join((installed.stdout + installed.stderr).split())
    assert '"baton" needs Claude Code >=99.0.0, this is 2.1.328' in said and "loads anyway" in said
    listed = " ".join(shell("claude plugin list", copy, env).stdout.split())
    assert "needs Claude Code >=99.0.0" in listed and "enabled" in listed

    project = tmp_path / "project"
    project.mkdir()
    shell(f"{copy / 'bin' / 'baton'} init only-step", project, env)
    fake_api.script = Turns([text("done")])
    run = claude.run("Go on.", cwd=project)
    assert run.returncode == 0, run.stderr
    [context] = injected(fake_api.requests_main()[0])
    assert context.line("NEXT: ") == "only-step"
