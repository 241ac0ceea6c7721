#!/usr/bin/env python3
"""Run a real job through the real Claude Code CLI and picture its report: docs/report.png.

A six-step job across five sessions, driven by the scripted Messages API of tests/e2e: a step that
waits for a person's approval (given with /baton:approve, typed as a prompt), a command that fails,
a session killed in the middle of a step, a validate command that fails once, and a cost limit low
enough for the projection alert. Then ``baton report --html`` writes the page and headless Chromium
takes the screenshot. Needs what dev/test installs (the pinned CLI, Chromium).

    .cache/venv/bin/python dev/demo_report.py [--out docs/report.png] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from browser import Browser  # noqa: E402

from tests.e2e.briefs import Run, bash, write  # noqa: E402
from tests.e2e.driver import Claude, find_claude, kill_while_hanging  # noqa: E402
from tests.e2e.fakeapi import HANG, FakeAPI, LoggedRequest, text  # noqa: E402
from tests.e2e.jobstate import baton, write_plan  # noqa: E402

PLAN: Dict[str, Any] = {
    "job": "parser-rewrite",
    "limits": {"cost_usd": 0.2, "repeated_failures": 2},
    "steps": [
        {"id": "survey", "title": "List every caller of the old parser", "phase": "discovered"},
        {"id": "design", "title": "Write the design note", "phase": "approved", "writes": ["docs/**"]},
        {"id": "port", "title": "Port the callers", "phase": "implemented"},
        {"id": "test", "title": "Make the test suite pass", "phase": "implemented", "validate": "test -f tests.ok"},
        {"id": "docs", "title": "Update the docs", "phase": "implemented"},
        {"id": "release", "title": "Write the changelog entry", "phase": "implemented"},
    ],
}


def usage() -> Any:
    counter = itertools.count(1)

    def report(entry: LoggedRequest) -> Dict[str, int]:
        n = next(counter)
        return {"input_tokens": 900 + 37 * n, "output_tokens": 140 + 11 * n, "cache_read_input_tokens": 4000 * n,
                "cache_creation_input_tokens": 600 + 20 * n}

    return report


def play(claude: Claude, api: FakeAPI, project: Path, plugin: Path) -> None:
    def run(prompt: str, **kw: Any) -> None:
        result = claude.run(prompt, cwd=project, plugin_dir=plugin, **kw)
        assert result.returncode == 0, result.stderr

    api.script = Run([bash("grep -rn 'old_parse' . || true"), bash('baton record survey done "3 callers"')],
                     [text("design needs an approval")])
    run("run the job")
    run("/baton:approve design the note may be written")
    api.script = Run([write(project / "docs" / "design.md", "# design\n"), bash('baton record design done "note"')],
                     [bash("python3 -c 'import parser2'")], [bash("python3 -c 'import parser2'")], HANG)
    kill_while_hanging(claude, api, project, plugin, prompt="continue the job", seconds=120)
    ported = write(project / "parser2.py", "def parse(x):\n    return x\n")
    api.script = Run([ported, bash('baton record port done "ported"')],
                     [bash('baton record test done "suite green"')],
                     [bash("touch tests.ok"), bash('baton record test done "suite green"')],
                     [bash('baton record docs done "updated"')], [text("pausing")])
    run("continue the job")
    api.script = Run([write(project / "CHANGELOG.md", "## 2.0\n"), bash('baton record release done "2.0 entry"')],
                     [text("the job is complete")])
    run("finish the job")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "report.png"))
    parser.add_argument("--keep", help="also copy the project and report.html here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="baton-demo-"))
    api = FakeAPI().start()
    api.usage = usage()
    claude = Claude(find_claude(), api.base_url, work / "home")
    try:
        project, plugin = work / "project", work / "baton"
        project.mkdir()
        for part in (".claude-plugin", "hooks", "commands", "bin", "store"):
            shutil.copytree(REPO / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
        write_plan(project, PLAN)
        play(claude, api, project, plugin)
        html = work / "report.html"
        made = baton(plugin, project, claude.home, "report", "--html", str(html))
        assert made.returncode == 0, made.stderr
        print(baton(plugin, project, claude.home, "status").stdout)
        with Browser(1100, 1250) as browser:
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
