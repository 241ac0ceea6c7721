"""The PostgreSQL store judges by the server's clock, not by each clone's (issue 25.9, its
PostgreSQL half): a clone whose clock is 20 minutes off (libfaketime, Debian's ``faketime``)
neither takes a live worker's step nor times its records by its own clock, so a retry from a clone
with the right time is still seen as one."""

from __future__ import annotations

import calendar
import glob
import time
from typing import TYPE_CHECKING, Dict

import outages
import psycopg
import pytest

if TYPE_CHECKING:
    from conftest import Baton, Sandbox
    from pgcluster import Cluster

LIB = (glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob("/usr/lib/faketime/libfaketime.so.1") or [""])[0]
pytestmark = pytest.mark.skipif(not LIB, reason="needs libfaketime (Debian's faketime package)")


def shifted(offset: str) -> Dict[str, str]:
    """The environment that moves a process's clock by ``offset`` (e.g. ``+20m``), monotonic time left alone."""
    return {"LD_PRELOAD": LIB, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1"}


def _server_now(url: str) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        return float(conn.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()[0])


def test_a_clone_with_a_wrong_clock_uses_the_servers(baton: Baton, sandbox: Sandbox, server: Cluster) -> None:
    url = server.createdb()
    outages.project(sandbox.project)
    session = {"CLAUDE_CODE_SESSION_ID": "s-1"}
    assert baton("claim", extra_env=outages.env_for(url, "w1", session)).out == "worker w1 claimed a\n"
    ahead = baton("claim", extra_env=outages.env_for(url, "w2", shifted("+20m")))
    assert ahead.out == "worker w2 claimed b\n", ahead  # a's lease is live by the server's clock

    behind = baton("record", "a", "done", "built", extra_env=outages.env_for(url, "w1", {**session,
                                                                                         **shifted("-20m")}))
    assert behind.code == 0, behind
    done = [r for r in outages.records(url) if (r["step"], r["status"]) == ("a", "done")]
    written = calendar.timegm(time.strptime(done[0]["ts"], "%Y-%m-%dT%H:%M:%SZ"))
    assert abs(written - _server_now(url)) < 60, (done[0]["ts"], time.time())
    retry = baton("record", "a", "done", "built", extra_env=outages.env_for(url, "w1", session))
    assert retry.code == 0 and retry.out.startswith("already recorded a done"), retry
    assert [s for s in outages.steps(url) if s == ("a", "done")] == [("a", "done")]
