"""NEXT for a worker, ready steps, claims folded from the ledger, leases, and what the brief says
about them (file store; the database's side is in tests/backend and tests/state/test_parallel)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from store.plan.plan import parse_plan
from store.state import claims, journal, leases, location, workers
from store.state.brief import render
from store.state.job import Job
from store.state.snapshot import Snapshot

PLAN = parse_plan({"steps": [
    {"id": "a", "needs": []}, {"id": "b", "needs": []}, {"id": "gate", "needs": [], "approval": True},
    {"id": "c", "needs": ["a", "b"]}, "d"]})


def snap_of(*records: Dict[str, Any]) -> Snapshot:
    snap = Snapshot()
    for seq, record in enumerate(records, 1):
        snap.apply({"seq": seq, "hash": f"h{seq}", "ts": f"2026-01-01T00:00:{seq:02d}Z", **record}, seq)
    return snap


def claim(step: str, worker: str) -> Dict[str, Any]:
    return {"step": step, "status": "claim", "worker": worker}


def test_identity_is_the_named_worker_else_the_session_else_user_at_host() -> None:
    assert workers.identity({"BATON_WORKER": " w7 ", "CLAUDE_CODE_SESSION_ID": "s1"}) == "w7"
    assert workers.identity({"CLAUDE_CODE_SESSION_ID": "s1"}) == "s1"
    assert workers.identity({"USER": "ann"}) == f"ann@{os.uname().nodename}"


def test_without_needs_next_is_the_first_step_not_done_for_everyone() -> None:
    plan = parse_plan({"steps": ["a", "b", "c"]})
    snap = snap_of({"step": "b", "status": "done"}, claim("a", "w1"))
    assert [workers.next_for(plan, snap, w).id for w in ("w1", "w2", "")] == ["a", "a", "a"]  # type: ignore[union-attr]


def test_in_a_parallel_plan_next_is_the_step_the_worker_holds() -> None:
    snap = snap_of(claim("a", "w1"), claim("b", "w2"))
    assert workers.next_for(PLAN, snap, "w1").id == "a"  # type: ignore[union-attr]
    assert workers.next_for(PLAN, snap, "w2").id == "b"  # type: ignore[union-attr]
    assert workers.next_for(PLAN, snap, "w3") is None
    done = snap_of(claim("a", "w1"), {"step": "a", "status": "done"})
    assert workers.next_for(PLAN, done, "w1") is None and done.claims == {}


def test_ready_steps_follow_needs_and_a_failed_step_stays_ready() -> None:
    snap = snap_of({"step": "a", "status": "done"}, {"step": "b", "status": "failed"})
    assert [s.id for s in workers.ready(PLAN, snap)] == ["b", "gate"]
    snap.apply({"seq": 9, "hash": "h", "step": "b", "status": "done"}, 9)
    assert [s.id for s in workers.ready(PLAN, snap)] == ["gate", "c"]
    assert workers.candidates(PLAN, snap, lambda s: s == "gate") == ["c", "gate"]  # approval steps last


def test_claims_fold_release_takeover_and_one_step_per_worker() -> None:
    folded: Dict[str, Dict[str, Any]] = {}
    for record in (claim("a", "w1"), {"step": "a", "status": "release", "worker": "w2"}):
        claims.fold(folded, {"seq": 1, "ts": "t1", **record})
    assert claims.holder(folded, "a") == "w1"  # only the holder gives a step back
    claims.fold(folded, {"seq": 2, "ts": "t2", "step": "a", "status": "release", "worker": "w1"})
    assert claims.holder(folded, "a") is None and claims.held_by(folded, "w1") is None
    claims.fold(folded, {"seq": 3, "ts": "t3", **claim("a", "w2")})
    assert folded["a"]["after"] == {"worker": "w1", "ts": "t1", "released": "t2"}
    claims.fold(folded, {"seq": 4, "ts": "t4", **claim("b", "w2")})
    assert claims.held_by(folded, "w2") == "b" and folded["a"]["released"] == "t4"
    claims.fold(folded, {"seq": 5, "ts": "t5", "step": "b", "status": "running"})
    claims.fold(folded, {"seq": 6, "ts": "t6", "step": "b", "status": "skipped"})
    assert "b" not in folded


def test_claims_are_saved_with_the_snapshot_and_a_damaged_claim_is_not_trusted() -> None:
    snap = snap_of(claim("a", "w1"), claim("b", "w2"), {"step": "b", "status": "release", "worker": "w2"},
                   claim("b", "w3"))
    back = Snapshot.from_bytes(snap.to_bytes())
    assert back is not None and back.claims == snap.claims
    assert (claims.holder(back.claims, "a"), claims.holder(back.claims, "b")) == ("w1", "w3")
    for damaged in ([], {"a": "w1"}, {"a": {"worker": 7}}, {"a": {"worker": "w1", "after": "w0"}},
                    {"a": {"worker": "w1", "released": None}}):
        data = json.loads(snap.to_bytes())
        data["claims"] = damaged
        assert Snapshot.from_bytes(json.dumps(data).encode()) is None, damaged  # rebuilt from the ledger instead


def _merged(record: Dict[str, Any], ts: str) -> Dict[str, Any]:
    """``record`` as `baton merge` copies it from another branch, written there at ``ts``."""
    return {**record, "ts": ts, "merged": {"seq": 1, "prev": "p", "hash": "h"}}


def test_a_claim_merged_from_another_branch_counts_only_when_it_is_later() -> None:
    snap = snap_of(claim("a", "w1"), claim("c", "w3"),  # at 00:00:01 and 00:00:02 here
                   _merged(claim("a", "w2"), "2026-01-01T00:00:00Z"),  # older: w1 keeps a
                   _merged({"step": "c", "status": "done"}, "2025-12-31T23:59:00Z"),  # c is done: w3 no longer holds it
                   _merged(claim("b", "w4"), "2026-01-01T00:00:30Z"),
                   _merged(claim("d", "w1"), "2025-12-31T23:00:00Z"))  # w1 moved on to a since
    # issue 25.12: a done that is the step's state ends the claim, even one made later here
    assert claims.holder(snap.claims, "a") == "w1" and claims.holder(snap.claims, "c") is None
    assert claims.holder(snap.claims, "b") == "w4"
    assert claims.held_by(snap.claims, "w1") == "a" and claims.holder(snap.claims, "d") is None
    later = snap_of(claim("a", "w1"), _merged(claim("a", "w2"), "2026-01-01T00:01:00Z"),
                    _merged({"step": "c", "status": "done"}, "2026-01-01T00:02:00Z"))
    assert claims.holder(later.claims, "a") == "w2" and later.claims["a"]["after"]["worker"] == "w1"


def test_git_merging_two_branches_ledgers_keeps_each_steps_latest_claim(chain_lines: Any, tmp_path: Path) -> None:
    from store.ledger import merge
    from store.state import snapshot

    def at(minute: int, **fields: Any) -> Dict[str, Any]:
        return {"ts": f"2026-01-01T10:{minute:02d}:00Z", "note": "", "session": "", **fields}

    shared = [at(0, step="a", status="claim", worker="w1")]
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    base = chain_lines(shared)
    mine = chain_lines([at(5, step="b", status="claim", worker="w3")], seq=2, prev=parse_hash(base[-1]))
    other = chain_lines([at(2, step="b", status="claim", worker="w2"), at(7, step="a", status="done"),
                         at(8, step="c", status="claim", worker="w2")], seq=2, prev=parse_hash(base[-1]))
    ours.write_bytes(b"".join(base + mine))
    theirs.write_bytes(b"".join(base + other))
    assert merge.merge(ours, theirs, "2026-01-01T11:00:00Z").added == 3
    snap = snapshot.rebuild(ours).snapshot
    assert claims.holder(snap.claims, "b") == "w3"  # ours claimed b after theirs did
    assert "a" not in snap.claims and snap.steps["a"]["status"] == "done"  # theirs finished a later
    assert claims.holder(snap.claims, "c") == "w2"


def parse_hash(line: bytes) -> str:
    return str(json.loads(line)["hash"])


def test_a_parallel_plans_quick_read_finds_a_claim_made_long_before(
        chain_lines: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quick read from the ledger's end finds each step's latest step record; a parallel plan's
    also reads every claim (store.state.coldclaims): a claim made long before is not lost, and its
    holder is told it holds it."""
    from store.state import quickread

    monkeypatch.setattr(journal, "INLINE_BYTES", 4096)  # a long ledger, at a scale a test can write
    monkeypatch.setattr(quickread, "TAIL_BYTES", 2048)
    monkeypatch.setattr(quickread, "MIN_TAIL", 5)
    layout = location.resolve()
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []}]}))
    notes = [{"ts": "2026-01-01T00:00:00Z", "step": "b", "status": "running", "note": f"progress {i}",
              "session": "", "worker": "w2"} for i in range(200)]
    layout.ledger.write_bytes(b"".join(chain_lines([
        {"ts": "2026-01-01T00:00:00Z", "step": "a", "status": "claim", "note": "", "session": "", "worker": "w1"},
        {"ts": "2026-01-01T00:00:00Z", "step": "b", "status": "claim", "note": "", "session": "", "worker": "w2"},
        *notes])))
    assert layout.ledger.stat().st_size > 4 * 4096
    job = Job(layout, {"BATON_WORKER": "w1"})
    assert job.partial and job.next is not None and job.next.id == "a"
    assert Job(layout, {"BATON_WORKER": "w2"}).next.id == "b"  # type: ignore[union-attr]
    sequential = parse_plan({"steps": ["a", "b"]})  # the same ledger under a plan without needs: read quickly
    assert quickread.read(layout.ledger, sequential.ids, (), None, 1.0).partial


def test_a_fresh_clones_first_claim_reads_the_claims_from_the_end_not_the_whole_ledger(
        chain_lines: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session starting in a fresh clone of a long parallel job claims a step without replaying
    the ledger (what took a hook past Claude Code's timeout), and the claim is the one the full
    replay would make: w1 holds a step long since, with no heartbeat file, so w3 takes it after w1."""
    from store.state import quickread, snapshot

    monkeypatch.setenv("BATON_FSYNC", "0")
    monkeypatch.setattr(journal, "INLINE_BYTES", 4096)
    monkeypatch.setattr(quickread, "TAIL_BYTES", 2048)
    monkeypatch.setattr(quickread, "MIN_TAIL", 5)
    layout = location.resolve()
    layout.root.mkdir()
    layout.plan.write_text(json.dumps({"limits": {"lease_minutes": 1},
                                       "steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []}]}))
    notes = [{"ts": "2026-01-01T00:00:00Z", "step": "b", "status": "running", "note": f"progress {i}",
              "session": "", "worker": "w2"} for i in range(200)]
    layout.ledger.write_bytes(b"".join(chain_lines([
        {"ts": "2026-01-01T00:00:00Z", "step": "a", "status": "claim", "note": "", "session": "", "worker": "w1"},
        *notes, {"ts": "2026-01-01T00:00:00Z", "step": "b", "status": "done", "note": "", "session": ""}])))
    replays: List[str] = []
    real_rebuild, real_catch_up = snapshot.rebuild, snapshot.catch_up
    monkeypatch.setattr(snapshot, "rebuild", lambda *a: replays.append("rebuild") or real_rebuild(*a))
    monkeypatch.setattr(snapshot, "catch_up", lambda *a: replays.append("catch_up") or real_catch_up(*a))
    job = Job(layout, {"BATON_WORKER": "w3"}, save=False)
    assert job.partial and job.take_step() == "a" and not replays
    record = json.loads(layout.ledger.read_bytes().splitlines()[-1])
    assert (record["status"], record["worker"], record["note"]) == (
        "claim", "w3", "claimed by worker w3 after worker w1 (whose lease expired)")
    monkeypatch.setattr(snapshot, "rebuild", real_rebuild)
    assert snapshot.rebuild(layout.ledger).snapshot.claims["a"]["after"]["worker"] == "w1"


@pytest.fixture
def layout(monkeypatch: pytest.MonkeyPatch) -> location.Layout:
    monkeypatch.setenv("BATON_FSYNC", "0")
    found = location.resolve()
    found.root.mkdir()
    found.plan.write_text('{"limits": {"lease_minutes": 1}, "steps": [{"id": "a", "needs": []}, '
                          '{"id": "b", "needs": []}, {"id": "c", "needs": ["a"]}]}')
    return found


def test_claims_hand_out_each_ready_step_once(layout: location.Layout) -> None:
    plan = Job(layout, {}).plan
    got = [workers.claim(layout, plan, w) for w in ("w1", "w2", "w3", "w1")]
    assert [(g.step, g.new) for g in got] == [("a", True), ("b", True), (None, False), ("a", False)]
    journal.append(layout, "a", "done")
    assert workers.claim(layout, plan, "w3").step == "c"  # c needed a: ready now
    assert [r["status"] for r in _ledger(layout)] == ["claim", "claim", "done", "claim"]


def _short_leases(layout: location.Layout, seconds: float) -> None:
    """The fixture's plan with leases of ``seconds``: leases are judged by the file system's clock
    (``leases.fs_now``), which no test can move, so a quiet holder is made by really waiting."""
    plan = json.loads(layout.plan.read_text())
    layout.plan.write_text(json.dumps({**plan, "limits": {"lease_minutes": seconds / 60}}))


def test_a_step_whose_holder_went_quiet_is_claimed_again_after_its_lease(layout: location.Layout) -> None:
    _short_leases(layout, 2.0)
    plan = Job(layout, {}).plan
    assert workers.claim(layout, plan, "w1").step == "a"
    assert workers.claim(layout, plan, "w2").step == "b"
    assert workers.claim(layout, plan, "w3").step is None
    snap = journal.read_state(layout).snapshot
    [lease] = [le for le in leases.file_leases(layout, plan, snap) if le.worker == "w1"]
    assert 0 <= lease.idle < 2 and lease.left > 0
    later = time.time() + 3  # 3 s from now, w1 having shown no activity since
    [late] = [le for le in leases.file_leases(layout, plan, snap, now=later) if le.worker == "w1"]
    assert late.left < 0
    time.sleep(2.5)
    leases.renew(layout, journal.read_state(layout).snapshot, "w2")  # w2 is active; w1 went quiet
    assert workers.claim(layout, plan, "w3").step == "a"
    brief = Job(layout, {"BATON_WORKER": "w3"}).brief()
    assert "NEXT: a" in brief.splitlines()
    assert ("LEFT RUNNING: a was claimed by worker w1 at " in brief
            and "which stopped showing activity until its lease expired" in brief)
    assert Job(layout, {"BATON_WORKER": "w1"}).next is None  # w1 lost it


def test_activity_keeps_the_lease(layout: location.Layout) -> None:
    _short_leases(layout, 3.0)
    plan = Job(layout, {}).plan
    workers.claim(layout, plan, "w1")
    time.sleep(2.0)
    leases.renew(layout, journal.read_state(layout).snapshot, "w1")  # what every hook call does
    time.sleep(2.0)  # 4 s after the claim, 2 s after the activity: the lease holds
    assert workers.claim(layout, plan, "w2").step == "b"
    assert workers.claim(layout, plan, "w3").step is None


def test_heartbeat_names_stay_inside_the_workers_folder(layout: location.Layout) -> None:
    for name in ("../../etc/passwd", "a/b", "..", "x" * 300, "s\u00e9ssion"):
        path = leases.heartbeat_path(layout, name)
        assert path.parent == layout.root / leases.HEARTBEATS and len(path.name) <= 80
    assert leases.heartbeat_path(layout, "a/b") != leases.heartbeat_path(layout, "a_b")


def test_the_brief_shows_the_workers_own_next_and_one_line_on_the_others() -> None:
    plan = parse_plan({"steps": [{"id": f"s{i}", "needs": []} for i in range(60)]})
    snap = snap_of(*[claim(f"s{i}", f"worker-{i}") for i in range(60)],
                   {"step": "s5", "status": "running", "session": "other"})
    held = leases.file_leases(location.Layout(Path("/nonexistent"), Path("/")), plan, snap)
    text = render(plan, snap, "mine", worker="worker-3", leases=held)
    lines = text.splitlines()
    assert "NEXT: s3" in lines
    others = [line for line in lines if line.startswith("OTHERS: ")]
    assert len(others) == 1 and others[0].startswith("OTHERS: 59 other workers: ") and len(others[0]) <= 260
    assert not any(line.startswith("LEFT RUNNING") for line in lines)  # s5 is another worker's, in progress
    idle = render(plan, snap_of(*[claim(f"s{i}", f"w{i}") for i in range(60)]), worker="late")
    assert "NEXT: (nothing ready for you now: 60 held by other workers - stop)" in idle.splitlines()


def _ledger(layout: location.Layout) -> List[Dict[str, Any]]:
    import json

    return [json.loads(line) for line in layout.ledger.read_text().splitlines()]
