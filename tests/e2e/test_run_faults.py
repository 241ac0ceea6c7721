"""`baton run` under the faults of issue 25 (items 6 and 8), reproduced for real with the pinned CLI:
a parallel plan (the run is one worker and claims its steps; it waits while others hold them), and a
SIGTERM while a process that a wrapper left behind still holds the session's output. (Item 7, the
cost limit, is in tests/faults/test_run_cost.py.)"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path

from .driver import Claude
from .fakeapi import FakeAPI, text
from .jobstate import baton, ledger, write_plan
from .processes import tagged_gone
from .runs import run_to_end, start_run, wait_for_process
from .test_run import done_counts, record, sessions_in, sleeper


def test_a_parallel_plan_is_worked_by_the_run_as_one_worker_that_waits_for_the_steps_others_hold(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path
) -> None:
    write_plan(project, {"steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []},
                                   {"id": "c", "needs": ["a", "b"]}]})
    other = baton(plugin_copy, project, claude.home, "claim", "--worker", "laptop")  # another worker holds a
    assert other.returncode == 0 and "claimed a" in other.stdout, other.stdout + other.stderr
    fake_api.script = [record("b"), [text("b is done")], record("c"), [text("c is done")]]

    run = start_run(claude, plugin_copy, project)
    run.wait_for(lambda e: e.get("event") == "wait" and e.get("after") == "nothing_ready", timeout=120)
    assert done_counts(project) == {"b": 1}  # the run's worker took b, the one step nobody held
    finished = subprocess.run([str(plugin_copy / "bin" / "baton"), "record", "a", "done", "by the laptop"],
                              cwd=project, env={**claude.env(), "BATON_WORKER": "laptop"},
                              capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0, finished.stderr
    if "NEXT: c (claimed for you)" in finished.stdout:  # `record` claimed the laptop's next step: give it back
        given = subprocess.run([str(plugin_copy / "bin" / "baton"), "release", "--worker", "laptop"], cwd=project,
                               env=claude.env(), capture_output=True, text=True, timeout=60)
        assert given.returncode == 0, given.stdout + given.stderr
    code = run.finish(timeout=180)

    assert code == 0, run.stderr
    assert done_counts(project) == {"a": 1, "b": 1, "c": 1}
    assert [e["ended"] for e in run.of("session_end")] == ["completed", "completed"]
    claims = [r for r in ledger(project) if r["status"] == "claim"]
    runs = [(r["worker"], r["step"]) for r in claims if r["worker"] != "laptop"]
    assert [step for _, step in runs] == ["b", "c"], claims
    assert len({worker for worker, _ in runs}) == 1 and runs[0][0].startswith("run-")  # one worker, the run
    assert [r["step"] for r in sessions_in(project)] == ["b", "c"]
    assert run.of("stop")[0]["outcome"] == "done"


def _wrapper(claude: Claude, folder: Path) -> Path:
    """A `claude` wrapper that, like a careless setup script, leaves a process holding its output
    in a session of its own (where neither Claude Code's group nor a signal to it reaches)."""
    script = folder / "claude-wrapper"
    script.write_text("#!/bin/sh\n"
                      "setsid python3 -c 'import time; time.sleep(300)  # leftover' &\n"
                      f'exec "{claude.exe}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_sigterm_stops_the_run_while_a_leftover_process_holds_the_sessions_output(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [record("a"), sleeper(), record("b"), [text("done")]]
    wrapper = _wrapper(claude, tmp_path)
    argv_claude = ["--claude", str(wrapper)]
    run = start_run(claude, plugin_copy, project, *argv_claude)
    run.wait_for(lambda e: e.get("event") == "session_start")
    wait_for_process(claude, "time.sleep(300)")
    leftover = wait_for_process(claude, "# leftover")

    started = time.monotonic()
    run.proc.send_signal(signal.SIGTERM)
    code = run.finish(timeout=60)

    assert code == 130, run.stderr
    assert time.monotonic() - started < 30
    assert [e["ended"] for e in run.of("session_end")] == ["interrupted"]
    session, stopped = ledger(project)[-2:]
    assert (session["status"], session["ended"]) == ("session", "interrupted")
    assert (stopped["status"], stopped["outcome"]) == ("stop", "interrupted")
    assert not os.path.exists(f"/proc/{leftover}") or "Z" in Path(f"/proc/{leftover}/stat").read_text().split()[2]
    assert tagged_gone(claude.tag, timeout=5), "a process outlived baton run"


def test_a_session_whose_output_a_leftover_holds_still_ends_and_the_run_goes_on(
    claude: Claude, fake_api: FakeAPI, project: Path, plugin_copy: Path, tmp_path: Path
) -> None:
    write_plan(project, {"steps": ["a", "b"]})
    fake_api.script = [record("a"), [text("a is done")], record("b"), [text("b is done")]]

    code, run = run_to_end(claude, plugin_copy, project, "--claude", str(_wrapper(claude, tmp_path)), timeout=120)

    assert code == 0, run.stderr
    assert done_counts(project) == {"a": 1, "b": 1}
    assert len(run.of("leftover")) == len(run.of("session_end")) >= 1
    assert tagged_gone(claude.tag, timeout=5)
