"""``baton store push`` of a parallel job that live workers are working in: the claims go with the
records, each with the lease its holder had, so a worker starting on the database takes only what
nobody holds, and the holders record their steps as theirs (issue 25.3)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import outages

if TYPE_CHECKING:
    from conftest import Baton, Sandbox
    from pgcluster import Cluster

PLAN = {"job": "outage", "steps": [{"id": "a", "needs": []}, {"id": "b", "needs": []}, {"id": "c", "needs": []},
                                   {"id": "d", "needs": ["a", "b", "c"]}]}


def test_push_keeps_the_live_claims_and_gives_back_the_released(
        baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    url = server.createdb()
    outages.project(sandbox.project, PLAN)
    for worker, step in (("w1", "a"), ("w2", "b"), ("w3", "c")):
        assert baton("claim", extra_env={"BATON_WORKER": worker}).out == f"worker {worker} claimed {step}\n"
    assert baton("release", extra_env={"BATON_WORKER": "w3"}).code == 0  # c is free again
    pushed = baton("store", "push", url)
    assert pushed.code == 0, pushed

    newcomer = baton("claim", extra_env=outages.env_for(url, "w4"))  # on the database now
    assert newcomer.out == "worker w4 claimed c\n", newcomer
    late = baton("claim", extra_env=outages.env_for(url, "w5"))
    assert late.code == 1 and late.out.startswith("nothing claimed for worker w5"), late  # a and b are held
    for worker, step in (("w1", "a"), ("w2", "b")):
        done = baton("record", step, "done", "built", extra_env=outages.env_for(url, worker))
        assert done.code == 0 and "lapsed" not in done.out + done.err, done
    claimed = [(r["step"], r.get("worker")) for r in outages.records(url) if r["status"] == "claim"]
    assert claimed[:3] == [("a", "w1"), ("b", "w2"), ("c", "w3")], claimed  # pushed from the file store
    assert [c for c in claimed[3:] if c[0] in ("a", "b")] == [], claimed  # nobody took a live worker's step
    assert {("a", "done"), ("b", "done")} <= set(outages.steps(url))
    status = json.loads(baton("status", "--json", extra_env=outages.env_for(url, "w4")).out)
    assert status["done"] == 2, status


def test_push_keeps_a_lapsed_lease_lapsed(baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    """A holder idle past its lease in the file store is not given a fresh one by the push."""
    url = server.createdb()
    outages.project(sandbox.project, {**PLAN, "limits": {"lease_minutes": 0.02}})  # 1.2 s
    assert baton("claim", extra_env={"BATON_WORKER": "w1"}).out == "worker w1 claimed a\n"
    time.sleep(2.5)  # w1 does nothing past its lease
    assert baton("store", "push", url).code == 0
    taken = baton("claim", extra_env=outages.env_for(url, "w2"))
    assert taken.out == "worker w2 claimed a\n", taken
