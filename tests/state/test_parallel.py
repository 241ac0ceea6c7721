"""Many workers on one job at once, on both stores: the file store shared by several checkouts
through ``BATON_DIR`` (processes on one machine), and PostgreSQL shared by separate clones.

Every step is done exactly once (the workers' own artifacts say so, not only the ledger), in
the order ``needs`` gives, and the chain verifies; a worker killed while holding a step loses
it when its lease expires, and the next claimant is told it was left running.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List

import pytest

from store.state import location, workers
from store.state.job import Job

if TYPE_CHECKING:
    from conftest import Baton
    from pgcluster import Cluster

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "tests" / "parallel_worker.py"
BACKENDS = ["file", "postgresql"]


def big_plan(steps: int = 200, seed: int = 13) -> Dict[str, Any]:
    """A wide graph: a dozen steps need nothing, each later one needs one to three of the thirty before it."""
    rng = random.Random(seed)
    out = []
    for i in range(steps):
        needs = [] if i < 12 else sorted({f"s{j:03d}" for j in rng.sample(range(max(0, i - 30), i), rng.randint(1, 3))})
        out.append({"id": f"s{i:03d}", "needs": needs})
    return {"job": "big", "steps": out}


class Shared:
    """One job shared by ``clones`` checkouts: a .baton/ of their own with a database, one .baton/
    named by BATON_DIR without."""

    def __init__(self, backend: str, root: Path, url: str, clones: int, plan: Dict[str, Any]) -> None:
        self.backend, self.plan = backend, plan
        self.clones = [root / f"clone{i}" for i in range(clones)]
        self.env: Dict[str, str] = {"BATON_DATABASE_URL": url} if backend == "postgresql" else {
            "BATON_DIR": str(root / "shared-state")}
        self.url = url
        for clone in self.clones:
            clone.mkdir(parents=True)
        for folder in ([Path(self.env["BATON_DIR"])] if backend == "file" else [c / ".baton" for c in self.clones]):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "plan.json").write_text(json.dumps(plan))

    def layout(self, clone: int = 0) -> location.Layout:
        return location.resolve({**os.environ, **self.env}, self.clones[clone])

    def records(self) -> List[Dict[str, Any]]:
        if self.backend == "file":
            return [json.loads(line) for line in (Path(self.env["BATON_DIR"]) / "steps.jsonl").read_text().splitlines()]
        from store.backend.postgres import SharedJob

        return [json.loads(line) for _, line in SharedJob(self.url, self.plan["job"]).lines()]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


@pytest.fixture
def db_url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "file":
        return ""
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return cluster.createdb()


def start(shared: Shared, tmp: Path, names: List[str], *extra: str) -> List[subprocess.Popen[str]]:
    """One worker process per name, spread over the clones, all waiting for the same start signal."""
    (tmp / "artifacts").mkdir(exist_ok=True)
    go = tmp / "go"
    env = {**os.environ, **shared.env}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    procs = []
    for i, name in enumerate(names):
        clone = shared.clones[i % len(shared.clones)]
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKER), str(REPO), str(clone), name, str(tmp / "artifacts"), str(tmp / "acks"),
             str(go), *extra], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


def finish(procs: List[subprocess.Popen[str]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def check_order_and_once(shared: Shared, artifacts: Path) -> List[Dict[str, Any]]:
    records = shared.records()
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    ids = [s["id"] for s in shared.plan["steps"]]
    records = [r for r in records if r["step"] in ids]  # a test's extra writer has steps of its own
    done = {r["step"]: r for r in records if r["status"] == "done"}
    twice = [s for s, n in Counter(r["step"] for r in records if r["status"] == "done").items() if n != 1]
    assert twice == []  # each step recorded done once
    assert sorted(done) == sorted(ids)
    for step in shared.plan["steps"]:  # each step's own work ran once, by the worker that recorded it
        lines = (artifacts / step["id"]).read_text().splitlines()
        assert lines == [done[step["id"]]["note"].split(" did ")[0]], (step["id"], lines)
    claimed = {r["step"]: r for r in records if r["status"] == "claim"}
    for step in shared.plan["steps"]:  # claimed only after every step it needs was done, and done after
        for need in step["needs"]:
            assert done[need]["seq"] < claimed[step["id"]]["seq"] < done[step["id"]]["seq"], (step["id"], need)
    return records


def test_sixteen_workers_in_four_clones_do_every_step_once_in_order(
        backend: str, db_url: str, tmp_path: Path, baton: Baton, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_FSYNC", "0")  # what is tested is the claims, not power loss
    shared = Shared(backend, tmp_path / "checkouts", db_url, 4, big_plan())
    names = [f"c{i % 4}-w{i}" for i in range(16)]
    procs = start(shared, tmp_path, names)
    began = time.monotonic()
    (tmp_path / "go").touch()
    finish(procs, 180)
    took = time.monotonic() - began

    records = check_order_and_once(shared, tmp_path / "artifacts")
    by_worker = Counter(r["worker"] for r in records if r["status"] == "claim")
    assert len(by_worker) >= 8, by_worker  # the work was shared, not done by one worker
    for clone in range(4):
        run = baton("verify", cwd=shared.clones[clone], extra_env=shared.env)
        assert run.code == 0 and run.out.startswith(f"ok: {len(records)} records, chain intact"), run
    print(f"{backend}: 200 steps by 16 workers in {took:.1f}s, {len(records)} records, claims per worker "
          f"{sorted(by_worker.values())}")


def test_a_worker_killed_holding_a_step_loses_it_when_its_lease_expires(
        backend: str, db_url: str, tmp_path: Path, baton: Baton, monkeypatch: pytest.MonkeyPatch) -> None:
    lease = 0.05  # minutes: 3 seconds
    plan = {"job": "lease", "limits": {"lease_minutes": lease},
            "steps": [{"id": "only", "needs": []}, {"id": "then", "needs": ["only"]}]}
    shared = Shared(backend, tmp_path / "checkouts", db_url, 2, plan)
    for name, value in shared.env.items():
        monkeypatch.setenv(name, value)
    [holder] = start(shared, tmp_path, ["doomed"], "--hold")
    (tmp_path / "go").touch()
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "only"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    killed = time.monotonic()

    layout = shared.layout(1)
    rescuer = {**os.environ, "BATON_WORKER": "rescuer"}
    first = workers.claim(layout, Job(layout, rescuer).plan, "rescuer")
    assert first.step is None  # the dead worker's lease still runs
    status = baton("status", "--json", cwd=shared.clones[1], extra_env={**shared.env, "BATON_WORKER": "rescuer"})
    [held] = json.loads(status.out)["workers"]
    assert (held["worker"], held["step"], held["live"]) == ("doomed", "only", True)

    while True:
        got = workers.claim(layout, Job(layout, rescuer).plan, "rescuer")
        if got.step is not None or time.monotonic() - killed > lease * 60 + 20:
            break
        time.sleep(0.2)
    waited = time.monotonic() - killed
    assert got.step == "only" and got.new
    assert waited >= lease * 60 - 1.0, waited  # not before the lease ran out
    brief = baton("brief", cwd=shared.clones[1], extra_env={**shared.env, "BATON_WORKER": "rescuer"}).out
    assert "NEXT: only" in brief
    assert "LEFT RUNNING: only was claimed by worker doomed at " in brief
    assert "stopped showing activity until its lease expired" in brief
    claims = [r for r in shared.records() if r["status"] == "claim"]
    assert [(r["step"], r["worker"]) for r in claims] == [("only", "doomed"), ("only", "rescuer")]
    assert claims[1]["note"] == "claimed by worker rescuer after worker doomed (whose lease expired)"


# ------------------------------------------------------------------ PostgreSQL only


def _expected_attempts(records: List[Dict[str, Any]]) -> List[int]:
    latest: Dict[str, Dict[str, Any]] = {}
    out = []
    for record in records:
        prior = latest.get(record["step"])
        out.append(1 if prior is None else prior["attempt"] + (prior["status"] != "running"))
        latest[record["step"]] = record
    return out


def test_eight_writers_of_a_thousand_records_lose_nothing_in_the_database(
        pg_cluster: Cluster, tmp_path: Path, baton: Baton) -> None:
    names = [f"w{i}" for i in range(8)]
    shared = Shared("postgresql", tmp_path / "checkouts", pg_cluster.createdb(), 4, {"job": "writers", "steps": names})
    procs = start(shared, tmp_path, names, "--records", "1000")
    (tmp_path / "go").touch()
    finish(procs, 240)

    records = shared.records()  # each line parsed: whole, and in seq order
    assert [r["seq"] for r in records] == list(range(1, 8001))
    for name in names:  # each writer's records all there, once, in its own order
        assert [int(r["note"].split("-")[1]) for r in records if r["step"] == name] == list(range(1000))
    assert [r["attempt"] for r in records] == _expected_attempts(records)
    run = baton("verify", cwd=shared.clones[0], extra_env=shared.env)
    assert run.code == 0 and run.out.startswith("ok: 8000 records, chain intact"), run
    from store.backend.postgres import SharedJob
    from store.state import remote

    job = SharedJob(shared.url, "writers")
    head = job.head()
    kept = remote.stored_snapshot(head)  # the snapshot written in each append's transaction
    assert kept is not None and kept.steps == remote.rebuild(job, head).steps


def test_a_server_restarted_mid_run_loses_no_acknowledged_record(
        pg_cluster: Cluster, tmp_path: Path, baton: Baton) -> None:
    plan = big_plan(60, seed=7)
    plan["job"] = "restart"
    shared = Shared("postgresql", tmp_path / "checkouts", pg_cluster.createdb(), 4, plan)
    procs = start(shared, tmp_path, [f"r{i}" for i in range(8)])
    scribe = start(shared, tmp_path, ["scribe"], "--records", "400")  # writes without pause: meets the outage
    (tmp_path / "go").touch()
    from store.backend.postgres import SharedJob

    deadline = time.monotonic() + 60
    while len(list(SharedJob(shared.url, "restart").lines())) < 60 and time.monotonic() < deadline:
        time.sleep(0.1)
    pg_cluster.restart()
    finish(procs + scribe, 180)
    for clone in shared.clones:  # a clone's next command writes whatever it still queues
        assert baton("brief", cwd=clone, extra_env=shared.env).code == 0
        assert not (clone / ".baton" / "queue.jsonl").exists()

    acks = [json.loads(line) for line in (tmp_path / "acks").read_text().splitlines()]
    records = shared.records()
    written = Counter((r["step"], r["status"], r["note"]) for r in records)
    lost = [a for a in acks if written[(a["step"], a["status"], a["note"])] != 1]
    assert lost == []  # every acknowledged record is there, once
    queued = [a for a in acks if a["queued"]]
    assert queued, "the restart happened while records were being written: some must have been queued"
    check_order_and_once(shared, tmp_path / "artifacts")
    run = baton("verify", cwd=shared.clones[0], extra_env=shared.env)
    assert run.code == 0 and run.out.startswith(f"ok: {len(records)} records, chain intact"), run
    print(f"restart: {len(acks)} acknowledged records, {len(queued)} of them queued and replayed")
