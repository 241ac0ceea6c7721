"""dev/install-claude-code does what the README's "What you need" says: it stops without npm, goes
on with a note on a Node.js older than the one Claude Code declares, and accepts only the pinned
version. The script runs for real, in a copy of dev/ with a cache of its own, with stand-ins for
`node`, `npm` and the CLI they install on a PATH that holds nothing else of the kind."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest
from docpages import section

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = (ROOT / "dev" / "install-claude-code").read_text()
[VERSION] = re.findall(r'^pinned="([\d.]+)"', SCRIPT, re.M)
[NODE_MAJOR] = re.findall(r"^node_major=(\d+)", SCRIPT, re.M)
PACKAGE = "node_modules/@anthropic-ai/claude-code"
# npm stand-in: logs its arguments, and "installs" a CLI that reports the version in $FAKE_REPORTS
NPM = """#!{python}
import os, sys
from pathlib import Path
with open(os.environ["NPM_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
prefix = Path(sys.argv[sys.argv.index("--prefix") + 1])
exe = prefix / "{package}" / "bin" / "claude.exe"
exe.parent.mkdir(parents=True, exist_ok=True)
exe.write_text("#!/bin/sh\\necho '%s (Claude Code)'\\n" % os.environ["FAKE_REPORTS"])
exe.chmod(0o755)
"""


class Installer:
    """A copy of dev/install-claude-code and dev/cache-dir, with a PATH of chosen programs."""

    def __init__(self, tmp_path: Path) -> None:
        self.repo = tmp_path / "baton"
        (self.repo / "dev").mkdir(parents=True)
        for name in ("install-claude-code", "cache-dir"):
            shutil.copy2(ROOT / "dev" / name, self.repo / "dev" / name)
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        for tool in ("bash", "env", "dirname", "mkdir", "readlink", "ln"):
            found = shutil.which(tool)
            assert found, tool
            (self.bin / tool).symlink_to(found)
        self.cache = tmp_path / "user-cache"
        self.log = tmp_path / "npm.log"
        self.log.write_text("")

    def program(self, name: str, body: str) -> None:
        path = self.bin / name
        path.write_text(body)
        path.chmod(0o755)

    def with_node(self, version: Optional[str]) -> None:
        if version is not None:
            self.program("node", f"#!/bin/sh\necho {version}\n")
        self.program("npm", NPM.format(python=sys.executable, package=PACKAGE))

    def run(self, reports: str = VERSION) -> subprocess.CompletedProcess[str]:
        env = {"PATH": str(self.bin), "HOME": str(self.repo.parent), "BATON_DEV_CACHE": str(self.cache),
               "NPM_LOG": str(self.log), "FAKE_REPORTS": reports}
        return subprocess.run([str(self.bin / "bash"), str(self.repo / "dev" / "install-claude-code")],
                              env=env, capture_output=True, text=True, timeout=60)

    def npm_calls(self) -> List[str]:
        return self.log.read_text().splitlines()

    @property
    def prefix(self) -> Path:
        """Where npm installs: through the checkout's .cache link, into the user's cache."""
        return self.repo / ".cache" / "claude-code"

    @property
    def exe(self) -> Path:
        return self.prefix / PACKAGE / "bin" / "claude.exe"


@pytest.fixture
def installer(tmp_path: Path) -> Installer:
    return Installer(tmp_path)


def test_without_npm_it_stops_and_says_what_to_install(installer: Installer) -> None:
    installer.program("node", f"#!/bin/sh\necho v{NODE_MAJOR}.1.0\n")
    done = installer.run()
    assert done.returncode == 1
    assert "npm is not on PATH" in done.stderr
    assert f"Install Node.js {NODE_MAJOR} or newer with npm" in done.stderr
    assert not installer.exe.exists()


@pytest.mark.parametrize("node", ["v20.20.2", "v18.0.0", None])
def test_an_older_node_gets_a_note_and_the_install_goes_on(installer: Installer, node: Optional[str]) -> None:
    installer.with_node(node)
    done = installer.run()
    assert done.returncode == 0, done.stderr
    assert f"declares Node.js {NODE_MAJOR} or newer and this is {node or 'none'}" in done.stderr
    assert "EBADENGINE" in done.stderr and "the tests still run" in done.stderr
    assert done.stdout.splitlines()[-1] == str(installer.exe)
    assert installer.exe.resolve().is_relative_to(installer.cache.resolve())
    assert installer.npm_calls() == [f"install --prefix {installer.prefix} "
                                     f"--no-audit --no-fund @anthropic-ai/claude-code@{VERSION}"]


def test_the_node_claude_code_declares_installs_without_a_note(installer: Installer) -> None:
    installer.with_node(f"v{NODE_MAJOR}.3.0")
    done = installer.run()
    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stderr
    assert done.stdout.splitlines()[-1] == str(installer.exe)


def test_an_install_that_reports_another_version_stops(installer: Installer) -> None:
    installer.with_node(f"v{NODE_MAJOR}.3.0")
    done = installer.run(reports="2.0.1")
    assert done.returncode == 1
    assert f"does not report version {VERSION}" in done.stderr


def test_once_installed_neither_node_nor_npm_is_needed(installer: Installer) -> None:
    installer.with_node(f"v{NODE_MAJOR}.3.0")
    assert installer.run().returncode == 0
    (installer.bin / "npm").unlink()
    (installer.bin / "node").unlink()
    again = installer.run()
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == str(installer.exe) and again.stderr == ""
    assert len(installer.npm_calls()) == 1


def test_the_readme_says_what_the_installer_does() -> None:
    """The same numbers, and the same three outcomes, in the README as in the script."""
    needs = " ".join(section("What you need").split())
    assert f"Claude Code** {VERSION} (tested)" in needs
    assert f"npm install -g @anthropic-ai/claude-code@{VERSION}" in needs
    assert (f"without `npm` on PATH it stops (exit 1) and says to install Node.js {NODE_MAJOR} or newer "
            "with npm") in needs
    assert f"with a Node.js older than {NODE_MAJOR}, which Claude Code {VERSION} declares" in needs
    assert "`EBADENGINE` and goes on" in needs
    assert f"checks that the executable reports {VERSION}, and stops if not" in needs
    manifest = (ROOT / ".claude-plugin" / "plugin.json").read_text()
    [declared] = re.findall(r'"claude-code": "([^"]+)"', manifest)
    assert f"the plugin declares `{declared}`" in needs and f"needs Claude Code {declared}" in needs
    driver = (ROOT / "tests" / "e2e" / "driver.py").read_text()
    assert f'PINNED_VERSION = "{VERSION}"' in driver

