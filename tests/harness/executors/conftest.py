"""Fixtures: one real PostgreSQL server and one real Ray cluster (a head and an extra worker
node, started with `ray start` on loopback) for this folder, stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support import require
from support.cluster import RayCluster, ray_cluster
from support.pg_server import create_database, pg_missing, postgres


@pytest.fixture(scope="session")
def pg_base() -> Iterator[str]:
    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    # max_connections: every Ray worker process keeps its own connections
    with postgres(max_connections=200) as url:
        yield url


@pytest.fixture
def pg_url(pg_base: str) -> str:
    """A fresh empty database on the session's server."""
    return create_database(pg_base)


@pytest.fixture(scope="session")
def cluster() -> Iterator[RayCluster]:
    # two nodes of one CPU each: two episodes at once, one per node (the machine has 2 cores)
    with ray_cluster(extra_nodes=1, cpus_per_node=1, object_store_mb=100) as c:
        yield c
