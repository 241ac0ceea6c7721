"""A job played through the real Claude Code CLI with everything a person opens the report for: a step
approved by a person (/baton:approve, typed as a prompt and answered without a model), the gate
refusing a write outside the step's ``writes``, a Bash append to the ledger and a side effect not
run through ``baton once``, a command that fails twice (an alert), a validate command that fails
once, an artifact, a side effect run through ``baton once``, and another whose session was killed
while it ran, so its outcome was unknown until the person settled it by hand in a terminal. Used by
tests/e2e/test_report_page.py and dev/demo_report.py.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any, Callable, Dict

from .briefs import Run, bash, write
from .driver import Claude, kill_group
from .fakeapi import HANG, FakeAPI, LoggedRequest, text
from .jobstate import baton, ledger, write_plan
from .processes import command, tagged_gone

PLAN: Dict[str, Any] = {
    "job": "parser-rewrite",
    "limits": {"cost_usd": 0.2, "repeated_failures": 2},
    "effects": ["./notify.sh*"],
    "steps": [
        {"id": "survey", "title": "List every caller of the old parser", "phase": "discovered"},
        {"id": "design", "title": "Write the design note", "phase": "approved", "writes": ["docs/**"]},
        {"id": "port", "title": "Port the callers", "phase": "implemented"},
        {"id": "test", "title": "Make the test suite pass", "phase": "implemented", "validate": "test -f tests.ok"},
        {"id": "package", "title": "Build the release archive", "phase": "implemented",
         "artifacts": ["dist/parser2.tar.gz"]},
        {"id": "announce", "title": "Tell the teams", "phase": "implemented"},
    ],
}
NOTIFY = """#!/bin/sh
# tells a team; "slow" waits long enough for the session to be killed half-way through
echo "posting to #$1 (idempotency key $BATON_IDEMPOTENCY_KEY)"
[ "$2" = slow ] && sleep 300
echo "sent message id=47$(printf %s "$1" | wc -c)"
"""
APPROVAL_NOTE = "the note may be written"
SETTLED = "the message is in #ops, id 4712"
REFUSED_WRITE = "src/parser2_draft.py"
REFUSED_BASH = "echo done >> .baton/steps.jsonl"


def usage() -> Callable[[LoggedRequest], Dict[str, int]]:
    counter = itertools.count(1)

    def report(entry: LoggedRequest) -> Dict[str, int]:
        n = next(counter)
        return {"input_tokens": 900 + 37 * n, "output_tokens": 140 + 11 * n, "cache_read_input_tokens": 4000 * n,
                "cache_creation_input_tokens": 600 + 20 * n}

    return report


def killed_during(claude: Claude, project: Path, plugin: Path, key: str) -> None:
    """Run a session and SIGKILL it, with everything it started, once ``baton once KEY`` recorded its
    intent and runs its command."""
    proc = claude.start("continue the job", cwd=project, plugin_dir=plugin)
    try:
        deadline = time.monotonic() + 120
        while not any(r["status"] == "intent" and r.get("key") == key for r in ledger(project)):
            assert time.monotonic() < deadline and proc.poll() is None, f"baton once {key} never started"
            time.sleep(0.1)
        while not any(line.split(": ", 1)[1].split() == ["sleep", "300"] for line in map(command, claude.live_pids())):
            assert time.monotonic() < deadline and proc.poll() is None, f"the command of {key} never started"
            time.sleep(0.1)  # its command, NOTIFY's `sleep 300`, is running now
    finally:
        kill_group(proc)
        proc.communicate(timeout=10)
        claude.kill_all()
    assert tagged_gone(claude.tag)


def play(claude: Claude, api: FakeAPI, project: Path, plugin: Path) -> None:
    """Run the whole job; every session but the killed one must end normally."""
    write_plan(project, PLAN)
    (project / "notify.sh").write_text(NOTIFY)
    (project / "notify.sh").chmod(0o755)
    api.usage = usage()

    def run(prompt: str) -> None:
        result = claude.run(prompt, cwd=project, plugin_dir=plugin)
        assert result.returncode == 0, result.stderr

    api.script = Run([bash("grep -rn 'old_parse' . || true"), bash('baton record survey done "3 callers in src/"')],
                     [text("design needs a person's approval")])
    run("run the job")
    run(f"/baton:approve design {APPROVAL_NOTE}")
    api.script = Run([write(project / REFUSED_WRITE, "draft\n"), bash(REFUSED_BASH)],
                     [write(project / "docs" / "design.md", "# design\n"),
                      bash('baton record design done "note in docs/design.md"')],
                     [bash("python3 -c 'import parser2'")], [bash("python3 -c 'import parser2'")],
                     [write(project / "parser2.py", "def parse(x):\n    return x\n"),
                      bash('baton record port done "parser2.py replaces the old parser"')],
                     [bash('baton record test done "suite green"')],
                     [bash("touch tests.ok"), bash('baton record test done "suite green"')], [text("pausing here")])
    run("continue the job")
    api.script = Run([bash("mkdir -p dist && tar czf dist/parser2.tar.gz parser2.py docs")],
                     [bash('baton record package done "dist/parser2.tar.gz"')],
                     [bash("./notify.sh team"), bash("baton once notify-team -- ./notify.sh team")],
                     [bash("baton once notify-ops -- ./notify.sh ops slow")], HANG)
    killed_during(claude, project, plugin, "notify-ops")
    settled = baton(plugin, project, claude.home, "once", "--settle", "notify-ops", "done", SETTLED)
    assert settled.returncode == 0, settled.stderr
    api.script = Run([bash('baton record announce done "both teams told"')], [text("the job is complete")])
    run("finish the job")
