"""Run a real job through the real Claude Code CLI and picture its report: docs/report.png.

The job of tests/e2e/report_job.py, driven by the scripted Messages API of tests/e2e: six steps
over five sessions, one approved by a person (/baton:approve, typed as a prompt), the gate
refusing three calls, a command that fails twice, a validate command that fails once, an
artifact, a side effect run through ``baton once`` and another whose session was killed while it
ran, settled by hand, and a cost limit low enough for the projection alert. Then ``baton report
--html`` writes the page and headless Chromium takes the screenshot (the top of the page). Needs
what dev/test installs (the pinned CLI, Chromium).

    .cache/venv/bin/python dev/demo_report.py [--out docs/report.png] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from browser import Browser  # noqa: E402

from tests.e2e import report_job  # noqa: E402
from tests.e2e.driver import Claude, find_claude  # noqa: E402
from tests.e2e.fakeapi import FakeAPI  # noqa: E402
from tests.e2e.jobstate import baton  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "report.png"))
    parser.add_argument("--keep", help="also copy the project and report.html here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="baton-demo-"))
    api = FakeAPI().start()
    claude = Claude(find_claude(), api.base_url, work / "home")
    try:
        project, plugin = work / "project", work / "baton"
        project.mkdir()
        for part in (".claude-plugin", "hooks", "commands", "bin", "store"):
            shutil.copytree(REPO / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
        report_job.play(claude, api, project, plugin)
        html = work / "report.html"
        made = baton(plugin, project, claude.home, "report", "--html", str(html))
        assert made.returncode == 0, made.stderr
        print(baton(plugin, project, claude.home, "status").stdout)
        with Browser(1100, 1760) as browser:
            browser.goto(html.as_uri())
            browser.pump(0.3)
            assert browser.errors() == [], browser.errors()
            browser.screenshot(Path(args.out))
        print(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes)")
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("home"))
    finally:
        claude.kill_all()
        api.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.pop("CLAUDECODE", None)
    sys.exit(main())
