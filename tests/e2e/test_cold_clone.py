"""A fresh clone of a long parallel job (no ``state.json``) whose first step is held since the job
began: the real CLI's session is first told NEXT is not known yet and its calls are refused with
[baton:reading]; each hook call reads on, and the job then goes on with no command from a person.

``BATON_TEST_READ_SECONDS`` shrinks each hook's read so that a 9 MB ledger takes several calls, and
the test holds the job's ``rebuild.lock`` so that only the hooks read (no rebuild aside).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import ledgers

from .briefs import injected
from .driver import Claude
from .fakeapi import FakeAPI, all_text_of, text, tool_results, tool_use
from .jobstate import ledger, write_plan

RECORDS = 50_000
PLAN = {"steps": [{"id": "held", "needs": []}, {"id": "b", "needs": []}]}


class Model:
    """Writes held.txt until the gate lets it, stops when it holds no step, and records its step
    once the write went through; NEXT comes from what baton last said."""

    def __init__(self, project: Path) -> None:
        self.project, self.tries = project, 0

    def __call__(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        results = [r.text for r in tool_results(body)]
        last = results[-1] if results else ""
        seen = all_text_of(body)
        if "recorded held done" in last:
            return [text("held is recorded.")]
        if last.startswith("File created") or "held.txt" in last and "baton" not in last:
            return [tool_use("Bash", {"command": 'baton record held done "wrote held.txt"', "description": "record"},
                             id="rec_held")]
        if "[baton:no-claim]" in last and "NEXT: held" not in seen.rsplit("[baton:no-claim]", 1)[1]:
            return [text("I hold no step yet; stopping.")]
        self.tries += 1
        if self.tries > 60:
            return [text("giving up")]
        return [tool_use("Write", {"file_path": str(self.project / "held.txt"), "content": "held\n"},
                         id=f"write_{self.tries}")]


def test_a_fresh_clone_is_read_by_its_hooks_and_the_job_goes_on(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, PLAN)
    state = project / ".baton"
    (state / "steps.jsonl").write_bytes(b"".join(ledgers.held_since_start(RECORDS)))
    fake_api.script = Model(project)
    fd = os.open(str(state / "rebuild.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        run = claude.run("work on the job", cwd=project, plugin_dir=plugin_copy, timeout=300,
                         env={"BATON_TEST_READ_SECONDS": "0.05", "BATON_WORKER": "w9"})
    finally:
        os.close(fd)
    assert run.returncode == 0, run.stderr
    requests = fake_api.requests_main()
    brief = "\n".join(i.text for i in injected(requests[0]))
    assert "NEXT: not known yet (reading the ledger: " in brief
    said = [r.text for r in tool_results(requests[-1])]
    assert any("[baton:reading]" in t and " MB" in t for t in said)
    assert (project / "held.txt").read_text() == "held\n"
    records = ledger(project)
    assert len(records) > RECORDS
    assert [(r["step"], r["status"], r.get("worker")) for r in records[RECORDS:] if r["status"] != "stop"][:1] == [
        ("held", "claim", "w9")]
    assert ("held", "done") in [(r["step"], r["status"]) for r in records[RECORDS:]]
    assert json.loads((state / "state.json").read_text())["steps"]["held"]["status"] == "done"
