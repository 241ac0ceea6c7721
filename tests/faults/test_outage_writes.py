"""Records in a parallel job when the store fails part way, each reproduced for real: the job's
PostgreSQL server killed (SIGKILL, every process) between a committed ``done`` and the claim that
follows it, a disk filled between the two, a retry while the server is down, ``store push`` of a
job whose steps live workers hold.

The record is the commit point: a ``done`` that is in the store is reported recorded (exit 0),
and a claim that failed after it is reported as that claim's failure. A caller's retry adds
nothing on either store, whether it is answered from the clone's copy, queued, or replayed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Tuple

import faultkit
import outages
import pytest

from store.backend.local import Local

if TYPE_CHECKING:
    from conftest import Baton, Sandbox
    from pgcluster import Cluster


def test_a_done_committed_before_the_server_died_is_recorded_and_the_lost_claim_said_so(
        baton: Baton, sandbox: Sandbox, server: Cluster, plugin_copy: Path) -> None:
    url = server.createdb()
    outages.project(sandbox.project)
    env = outages.env_for(url, "w1")
    assert baton("claim", extra_env=env).out == "worker w1 claimed a\n"
    outages.hold_claims(url)
    proc = outages.start(plugin_copy, ["record", "a", "done", "built"], sandbox.project, env)
    outages.wait_until_held(url)  # the done is committed; its claim of b waits inside the server
    server.kill()
    code, out, err = outages.finish(proc)
    assert code == 0, (code, out, err)
    assert out.startswith("recorded a done (attempt 1, #2); NEXT: (no step claimed: claiming the next ready one "
                          "failed"), out
    assert "baton: warning: a is recorded done, but no next step could be claimed for worker w1: the job's " \
           "database cannot be reached: " in err, err
    assert err.rstrip("\n").endswith("; run `baton claim` once that is fixed"), err
    outages.only_baton_lines(err)
    assert "nothing was recorded" not in out + err

    retry = baton("record", "a", "done", "built", extra_env=env)  # a caller that retries all the same
    assert retry.code == 0 and retry.out.startswith("already recorded a done (attempt 1, #2"), retry
    assert not Local(sandbox.state).queued()
    server.start()
    outages.let_claims_go(url)
    assert baton("claim", extra_env=env).out == "worker w1 claimed b\n"
    assert outages.steps(url) == [("a", "claim"), ("a", "done"), ("b", "claim")]


def test_a_retry_queued_while_the_server_was_down_is_written_once(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    """The clone's copy did not see the first record (its answer was lost): the retry is queued, and
    the replay, judging it in the transaction as the file store judges a retry, adds nothing."""
    url = server.createdb()
    outages.project(sandbox.project)
    env = outages.env_for(url, "w1", {"CLAUDE_CODE_SESSION_ID": "s-1"})
    assert baton("claim", extra_env=env).code == 0
    assert baton("record", "a", "done", "built", extra_env=env).code == 0
    (sandbox.state / "shared.json").unlink()  # as if the commit's answer never reached this clone
    server.kill()
    queued = baton("record", "a", "done", "built", extra_env=env)
    assert queued.code == 0 and queued.out.startswith("queued a done"), queued
    assert [e["note"] for e in Local(sandbox.state).queued()] == ["built"]
    server.start()
    assert baton("status", extra_env=env).code == 0  # any command replays the queue
    assert not Local(sandbox.state).queued()
    assert outages.steps(url) == [("a", "claim"), ("a", "done"), ("b", "claim")]
    later = baton("record", "b", "done", "drawn", extra_env=env)  # a new note is new information
    assert later.code == 0 and outages.steps(url)[-2:] == [("b", "done"), ("c", "claim")]


def test_a_retry_while_the_server_is_down_is_answered_from_the_copy(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    url = server.createdb()
    outages.project(sandbox.project)
    env = outages.env_for(url, "w1", {"CLAUDE_CODE_SESSION_ID": "s-1"})
    assert baton("claim", extra_env=env).code == 0
    assert baton("record", "a", "running", "started", extra_env=env).code == 0
    server.stop()
    first = baton("record", "a", "failed", "tests red", extra_env=env)
    assert first.code == 0 and first.out.startswith("queued a failed"), first
    again = baton("record", "a", "failed", "tests red", extra_env=env)  # the caller did not see the answer
    assert again.code == 0 and again.out.startswith("already queued a failed"), again
    assert "a retry adds nothing" in again.out
    assert [e["note"] for e in Local(sandbox.state).queued()] == ["tests red"]
    server.start()
    assert baton("status", extra_env=env).code == 0
    assert outages.steps(url) == [("a", "claim"), ("a", "running"), ("a", "failed")]


def test_a_done_appended_before_the_disk_filled_is_recorded_and_the_lost_claim_said_so(
        baton: Baton, tmp_path: Path) -> None:
    """The file store: the ``done`` fits in the ledger's last page of a full tmpfs, its claim does not."""
    plan = {"steps": [*outages.PLAN["steps"], {"id": "pad", "needs": ["c"]}]}
    with faultkit.small_disk(tmp_path / "disk") as mount:
        project = outages.project(mount / "project", plan)
        twin = outages.project(tmp_path / "twin", plan)
        env = {"BATON_WORKER": "w1", "BATON_FSYNC": "0"}
        for where in (project, twin):
            assert baton("claim", cwd=where, extra_env=env).out == "worker w1 claimed a\n"
        done_line, claim_line = _lines_added(baton, twin, env)
        _leave_room(baton, project, env, len(done_line), len(claim_line))
        faultkit.fill(mount)
        run = baton("record", "a", "done", "built", cwd=project, extra_env=env)
        assert run.code == 0, run
        assert run.out.startswith("recorded a done (attempt 1, #"), run
        assert "NEXT: (no step claimed: claiming the next ready one failed" in run.out
        assert ("baton: warning: a is recorded done, but no next step could be claimed for worker w1: cannot "
                f"claim: disk full: {project / '.baton' / 'steps.jsonl'}; no step was claimed; run `baton claim` "
                "once that is fixed") in run.err, run.err
        ledger = [json.loads(line) for line in (project / ".baton" / "steps.jsonl").read_bytes().splitlines()]
        assert [(r["step"], r["status"]) for r in ledger][-2:] == [("pad", "running"), ("a", "done")]
        retry = baton("record", "a", "done", "built", cwd=project, extra_env=env)
        assert retry.code == 0 and retry.out.startswith("already recorded a done"), retry
        (mount / "filler").unlink()
        assert baton("claim", cwd=project, extra_env=env).out == "worker w1 claimed b\n"


def _lines_added(baton: Baton, twin: Path, env: Dict[str, str]) -> Tuple[bytes, bytes]:
    """The done line and the claim line `record a done built` appends (measured in a twin job)."""
    ledger = twin / ".baton" / "steps.jsonl"
    assert baton("record", "pad", "running", "x", cwd=twin, extra_env=env).code == 0  # as the padding will be
    padded = ledger.read_bytes()
    assert baton("record", "a", "done", "built", cwd=twin, extra_env=env).code == 0
    added = ledger.read_bytes()[len(padded):].splitlines(keepends=True)
    assert len(added) == 2, added
    return added[0], added[1]


def _leave_room(baton: Baton, project: Path, env: Dict[str, str], done: int, claim: int) -> None:
    """Pad the ledger with ``pad running`` records until its last page (4 KiB, tmpfs's) has room
    for a done line of ``done`` bytes and not for a claim line of ``claim`` bytes after it."""
    page, ledger = 4096, project / ".baton" / "steps.jsonl"
    target = done + claim // 2
    for number in range(40):
        size = ledger.stat().st_size
        room = page - size % page
        if abs(room - target) < claim // 2 - 8:
            return
        want = (room - target) % page  # bytes to add so that `target` bytes are left
        base = 180  # a pad record's line without its note, about
        note = f"{number}-" + "x" * max(0, min(250, want - base))
        assert baton("record", "pad", "running", note, cwd=project, extra_env=env).code == 0
    pytest.fail("could not leave the room wanted in the ledger's last page")
