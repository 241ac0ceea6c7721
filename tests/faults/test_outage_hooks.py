"""Hooks and commands on a frozen server (every server process SIGSTOPped: connections are taken
by the kernel and never answered), and while it is down (issue 25.4, 25.5).

Claude Code kills a hook at 10 s: each hook answers well inside that, with the local copy, whatever
the server does, and ``status``, ``status --json``, ``log`` and ``report`` show what the clone's copy
knows, marked as of when."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict

import faultkit
import outages

if TYPE_CHECKING:
    from conftest import Baton, Sandbox
    from pgcluster import Cluster

HOST_LIMIT = 10.0  # seconds: Claude Code stops a SessionStart, PreToolUse or Stop hook here


def _timed_hook(event: str, payload: Dict[str, Any], sandbox: Sandbox, env: Dict[str, str]) -> float:
    began = time.monotonic()
    faultkit.hook(event, payload, sandbox.project, env, matcher_tool=str(payload.get("tool_name", "")))
    return time.monotonic() - began


def test_hooks_answer_inside_the_hosts_limit_on_a_frozen_server(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    import os

    url = server.createdb()
    outages.project(sandbox.project)
    env = {**os.environ, **outages.env_for(url, "w1")}
    assert baton("claim", extra_env=env).out == "worker w1 claimed a\n"
    server.freeze()
    try:
        took = {
            "SessionStart": _timed_hook("SessionStart", {"source": "startup"}, sandbox, env),
            "PreToolUse": _timed_hook("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                                     "tool_use_id": "t1"}, sandbox, env),
            "Stop": _timed_hook("Stop", {"stop_hook_active": False}, sandbox, env),
        }
        claim, claim_took = outages.timed(baton, "claim", extra_env={**env, "BATON_WORKER": "w2"})
    finally:
        server.thaw()
    print("frozen server:", {k: round(v, 2) for k, v in took.items()}, "claim", round(claim_took, 2))
    assert all(seconds < HOST_LIMIT for seconds in took.values()), took
    assert claim.code != 0 and "cannot be reached" in claim.err, claim
    assert claim_took < 25, claim_took  # one wait of 15 s per outage, not one per query (two took 32 s)


def test_status_log_and_report_show_the_clones_copy_while_the_server_is_down(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    import json
    import os

    url = server.createdb()
    outages.project(sandbox.project)
    env = outages.env_for(url, "w1")
    assert baton("claim", extra_env=env).code == 0
    assert baton("record", "a", "done", "built", extra_env=env).code == 0  # w1 claims b after it
    server.kill()
    assert baton("record", "b", "running", "drawing", extra_env=env).out.startswith("queued b running")

    status = baton("status", extra_env=env)
    assert status.code == 0, status
    first = status.out.splitlines()[0]
    assert first.startswith("database: cannot be reached since 20") and "shown as of 20" in first, status.out
    assert "1 record(s) queued" in first, first
    data = json.loads(baton("status", "--json", extra_env=env).out)
    assert data["database"]["reachable"] is False and data["database"]["queued"] == 1, data["database"]
    assert data["done"] == 1 and [(r["step"], r["status"]) for r in data["last"]][-2:] == [
        ("b", "claim"), ("b", "running")], data["last"]

    log = baton("log", extra_env=env)
    assert log.code == 0, log
    assert [line.split()[2:4] for line in log.out.splitlines()] == [
        ["a", "claim"], ["a", "done"], ["b", "claim"], ["b", "running"]], log.out
    assert log.err.startswith("baton: warning: the job's database cannot be reached (") and "as of 20" in log.err
    report = baton("report", extra_env=env)
    assert report.code == 0 and report.out.startswith("database: cannot be reached since 20"), report
    page = baton("report", "--html", str(sandbox.home / "report.html"), extra_env=env)
    assert page.code == 0, page
    html = (sandbox.home / "report.html").read_text()
    assert '<p class="alert" id="database">database: cannot be reached since 20' in html, html[:2000]
    prompt = faultkit.hook("UserPromptSubmit", {"prompt": "/baton:status"}, sandbox.project,
                            {**os.environ, **env})
    assert "database: cannot be reached since 20" in json.dumps(prompt), prompt
    server.start()
    assert baton("status", extra_env=env).code == 0
    assert outages.steps(url)[-1] == ("b", "running")  # the queue was written once it was back


def test_the_brief_says_checkpoints_are_unchecked_while_the_server_is_frozen_or_down(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    """Issue 25.12: a job kept in the database has its checkpoints checked through the server; when
    it cannot answer, SessionStart and `baton brief` still come, in time, with an UNCHECKED line."""
    import json
    import os

    url = server.createdb()
    outages.project(sandbox.project, {"job": "cp", "steps": [{"id": "build", "artifacts": ["dist/app.txt"]}, "ship"]})
    (sandbox.project / "dist").mkdir()
    (sandbox.project / "dist" / "app.txt").write_text("built\n")
    env = {"BATON_DATABASE_URL": url}
    assert baton("record", "build", "done", "built", extra_env=env).code == 0
    (sandbox.project / "dist" / "app.txt").unlink()
    changed = "CHANGED: build: dist/app.txt is missing: do not trust it"
    unchecked = ("UNCHECKED: the DONE steps' artifacts and inputs were not checked; run `baton verify --artifacts` "
                 "once this is fixed: the job's database cannot be reached: ")
    assert changed in baton("brief", extra_env=env).out
    server.freeze()
    try:
        began = time.monotonic()
        answer = faultkit.hook("SessionStart", {"source": "startup"}, sandbox.project, {**os.environ, **env})
        took = time.monotonic() - began
    finally:
        server.thaw()
    text = faultkit.context(answer)
    print("SessionStart on a frozen server, with a checkpoint:", round(took, 2))
    assert took < HOST_LIMIT, took
    assert "DEGRADED: the job's database cannot be reached" in text and unchecked in text, text
    assert "NEXT: ship" in text and changed not in text, text
    server.kill()
    brief = baton("brief", extra_env=env)
    assert brief.code == 0 and brief.err == "", brief
    assert unchecked in brief.out and changed not in brief.out, brief.out
    verified = baton("verify", "--artifacts", extra_env=env)
    assert verified.code != 0 and "cannot be reached" in verified.err and "Traceback" not in verified.err, verified
    server.start()
    back = faultkit.context(faultkit.hook("SessionStart", {"source": "startup"}, sandbox.project,
                                          {**os.environ, **env}))
    assert changed in back and "UNCHECKED" not in back, back
    assert json.loads(baton("verify", "--artifacts", "--json", extra_env=env).out)["ok"] is True
