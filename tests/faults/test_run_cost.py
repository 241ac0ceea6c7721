"""Issue 25 item 7: ``limits.cost_usd`` stops ``baton run`` after the session that reached it, not one
session late. The session is a stand-in for Claude Code that does what a session does as far as the
supervisor can see (an init line naming the baton plugin, a ``baton record`` of NEXT, a result with
``total_cost_usd``) and nothing else: no hooks run, so the session record is the only place its cost
is known, which is where the run used to look before that record was in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    from conftest import Baton, Sandbox

SESSION = '''\
import json, subprocess, sys, uuid
baton = [sys.executable, {baton!r}]
sid = str(uuid.uuid4())
print(json.dumps({{"type": "system", "subtype": "init", "session_id": sid, "plugins": [{{"name": "baton"}}]}}))
status = json.loads(subprocess.run(baton + ["status", "--json"], capture_output=True, text=True).stdout)
subprocess.run(baton + ["record", status["next"], "done", "by the stand-in"], check=True, capture_output=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "session_id": sid,
                  "total_cost_usd": {cost}, "num_turns": 1, "result": "done"}}))
'''


def _claude(folder: Path, baton_script: Path, cost: float) -> Path:
    script = folder / "claude"
    script.write_text(f"#!{sys.executable}\n" + SESSION.format(baton=str(baton_script), cost=cost))
    script.chmod(0o755)
    return script


def _ledger(sandbox: Sandbox) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (sandbox.state / "steps.jsonl").read_text().splitlines()]


def test_the_cost_limit_stops_the_run_after_the_session_that_reached_it(
        sandbox: Sandbox, baton: Baton, plugin_copy: Path, tmp_path: Path) -> None:
    assert baton("init", "a", "b", "c").code == 0
    plan = json.loads((sandbox.state / "plan.json").read_text())
    (sandbox.state / "plan.json").write_text(json.dumps({**plan, "limits": {"cost_usd": 0.5}}))
    claude = _claude(tmp_path, plugin_copy / "bin" / "baton", 0.75)

    run = baton("run", "--claude", str(claude), "--json", "--first-wait", "0.1", timeout=120)

    assert run.code == 4, run.out + run.err
    sessions = [r for r in _ledger(sandbox) if r["status"] == "session"]
    assert [(r["step"], r["ended"], r["cost_usd"]) for r in sessions] == [("a", "limit", 0.75)]
    stop = _ledger(sandbox)[-1]
    assert (stop["status"], stop["outcome"], stop["step"]) == ("stop", "limit", "b")
    assert stop["note"].startswith("limit reached: cost_usd 0.75 of 0.5. NEXT: b.")
    events = [json.loads(line) for line in run.out.splitlines()]
    assert [e["event"] for e in events if e["event"].startswith("session_")] == ["session_start", "session_id",
                                                                                 "session_end"]
    assert subprocess.run([sys.executable, str(plugin_copy / "bin" / "baton"), "verify"],
                          capture_output=True).returncode == 0
