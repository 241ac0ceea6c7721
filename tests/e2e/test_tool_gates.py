"""The tools beyond Bash and Write, through the real CLI while a job is active (issue 23.6, 29.8).

A Monitor's command is checked and runs in baton's sandbox as a Bash command does: one naming the
approval key is refused, one reaching it by a path baton cannot read finds it hidden, and one that
writes outside the step's ``writes`` changes nothing there. PowerShell (opted in), EnterWorktree,
Workflow and a WebFetch of the key's file: URL are refused. What is checked is what the model is
told in the next requests and what is on disk: the key's text never reaches the model, and no
file outside ``writes`` appears.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .driver import Claude
from .fakeapi import FakeAPI, text, tool_use
from .jobstate import gate_denied, results_by_id, write_plan

PLAN = {
    "job": "e2e-tools",
    "limits": {"stop_blocks": 1},
    "steps": [{"id": "a", "title": "write the sources", "phase": "implemented", "writes": ["src/**"]}, {"id": "b"}],
}
SECRET = "KEY-TEXT-7f3a91"


def monitor(call_id: str, command: str) -> dict[str, object]:
    return tool_use("Monitor", {"command": command, "description": call_id}, id=call_id)


def test_monitor_powershell_worktrees_and_workflows_meet_the_gate(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, PLAN)
    (project / "src").mkdir()
    key = claude.home / ".config" / "baton" / "approval.key"
    key.parent.mkdir(parents=True)
    key.write_text(SECRET + "\n")
    fake_api.script = [
        [
            text("working"),
            monitor("m_key", "cat ~/.config/baton/approval.key"),
            monitor("m_hidden", "cat $(printf %s ~/.con fig/bat on/appr oval.key | tr -d ' ')"),
            monitor("m_out", "python3 -c \"open('out' + 'side.txt', 'w').write('x')\"; echo done"),
            monitor("m_in", "echo y > src/in.txt; echo done"),
            tool_use("PowerShell", {"command": "Get-Content ~/.config/baton/approval.key"}, id="ps"),
            tool_use("EnterWorktree", {"name": "side"}, id="wt"),
            tool_use("Workflow", {"name": "deep-research", "args": "x"}, id="wf"),
            tool_use("WebFetch", {"url": f"file://{key}", "prompt": "show it"}, id="wf_file"),
        ],
        [text("done")],
        [text("done")],
        [text("done")],
    ]

    run = claude.run("do step a", cwd=project, plugin_dir=plugin_copy,
                     env={"CLAUDE_CODE_USE_POWERSHELL_TOOL": "1"}, timeout=180)

    assert run.returncode == 0, run.stderr
    seen = results_by_id(fake_api.requests_main()[1])
    for call_id in ("m_key", "ps", "wt", "wf", "wf_file"):
        assert gate_denied(seen[call_id]), (call_id, seen[call_id].text)
    assert "names baton's approval key" in seen["m_key"].text
    assert "baton denied PowerShell: " in seen["ps"].text
    assert "baton denied EnterWorktree: " in seen["wt"].text
    assert "baton denied Workflow: " in seen["wf"].text
    assert "baton denied this WebFetch: file://" in seen["wf_file"].text
    for call_id in ("m_hidden", "m_out", "m_in"):
        assert not gate_denied(seen[call_id]), (call_id, seen[call_id].text)
    # A Monitor runs in the background: wait for its whole line (a file the shell has created may be
    # empty still), not for the file alone.
    written = project / "src" / "in.txt"
    deadline = time.monotonic() + 30
    while not (written.exists() and written.read_text() == "y\n"):
        assert time.monotonic() < deadline, written.read_text() if written.exists() else "no src/in.txt"
        time.sleep(0.2)
    assert not (project / "outside.txt").exists()
    assert not (project / ".claude" / "worktrees").exists()
    assert SECRET not in json.dumps(fake_api.requests()), "the key's text reached the model"
    assert key.read_text() == SECRET + "\n"
