"""The fault tests' PostgreSQL server: one of their own (they kill it, freeze it and fill its
clients' disks, which the session's shared server must never see), running at the start of every
test and brought back after it whatever the test did."""

from __future__ import annotations

from typing import Iterator

import pytest
from pgcluster import Cluster, start_cluster


@pytest.fixture(scope="session")
def outage_cluster() -> Iterator[Cluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.thaw()
        cluster.remove()


@pytest.fixture
def server(outage_cluster: Cluster) -> Iterator[Cluster]:
    """A server to kill, stop or freeze: running when the test starts, running again after it."""
    outage_cluster.thaw()
    if not outage_cluster.running():
        outage_cluster.start()
    yield outage_cluster
    outage_cluster.thaw()
    if not outage_cluster.running():
        outage_cluster.start()
