"""Installing baton as a user does: the repository is its own marketplace.

This tests COMMITTED code only: the repository is cloned (`git clone` of HEAD) into a temporary
folder, as a user's checkout would be, so uncommitted edits in the working tree are not part of
it; run it after committing. Cloning also keeps the installer from copying `.cache/` (the pinned
CLI, hundreds of MB), since `claude plugin install` copies the whole marketplace folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .briefs import Run, bash, injected
from .driver import REPO, Claude
from .fakeapi import FakeAPI, text, tool_results
from .jobstate import baton


def plugin_command(claude: Claude, *args: str) -> str:
    """`claude plugin ARGS` with the driver's HOME and environment; its output."""
    done = subprocess.run(
        [str(claude.exe), "plugin", *args],
        env=claude.env(), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"claude plugin {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def test_marketplace_install_runs_the_hooks_without_plugin_dir(
    claude: Claude, fake_api: FakeAPI, project: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True, timeout=120)
    assert not (checkout / ".cache").exists()

    plugin_command(claude, "marketplace", "add", str(checkout))
    plugin_command(claude, "install", "baton@baton")
    assert "baton@baton" in plugin_command(claude, "list")

    made = baton(checkout, project, claude.home, "init", "a", "b")
    assert made.returncode == 0, made.stderr
    fake_api.script = Run([bash("baton brief")], [text("seen")])
    run = claude.run("start the job", cwd=project)  # no --plugin-dir: the installed plugin only

    assert run.returncode == 0, run.stderr
    first, second, *_ = fake_api.requests_main()
    [context] = injected(first)
    assert (context.line("PLAN: "), context.line("NEXT: ")) == ("a, b", "a")
    # The plugin's bin/ is on the Bash tool's PATH, and the gate lets `baton brief` through.
    [brief] = tool_results(second)
    assert not brief.is_error and brief.text.splitlines()[2] == "NEXT: a", brief.text
