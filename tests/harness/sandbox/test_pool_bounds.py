"""The target-service pool stays bounded: a cap on running instances (least recently used idle
groups stopped first, never one a call is using) and idle eviction; an evicted target answers
again after a cold start. Real bwrap services."""

import asyncio
import os
import time

import pytest

from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.sandbox.pool import ServicePool
from interp_harness.harness.target_client import ServiceTargetClient

IDS = ["find-v1/numeric/f00473", "find-v1/numeric/f00001", "find-v1/numeric/f00002"]


@pytest.fixture(scope="module")
def catalog():
    return Catalog()


def _alive(pool: ServicePool) -> set[int]:
    return {h.meta["pid"] for h in pool.handles()}


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
async def test_cap_evicts_least_recently_used_idle_group(bwrap, catalog):
    pool = ServicePool(bwrap, max_services=2)
    client = ServiceTargetClient(catalog, pool)
    try:
        a, b, c = IDS
        await client.call(a, ["1"])
        await client.call(b, ["1"])
        first = {h.url: h.meta["pid"] for h in pool.handles()}
        pool.url_for(a)  # a is now more recent than b
        await client.call(c, ["1"])
        assert len(pool.handles()) == 2
        assert pool.serves(a) and pool.serves(c) and not pool.serves(b)
        gone = [pid for pid in first.values() if pid not in _alive(pool)]
        assert len(gone) == 1
        time.sleep(0.3)
        assert not _running(gone[0])
        # the evicted target answers again (a cold start), still under the cap
        out = await client.call(b, ["0"])
        want = catalog.get(b)
        assert out[0].error is None and out[0].output is not None, (want.id, out)
        assert len(pool.handles()) == 2
    finally:
        await client.aclose()
        pool.close()


async def test_a_leased_group_is_never_evicted(bwrap, catalog):
    pool = ServicePool(bwrap, max_services=2)
    try:
        a, b, c = IDS
        for t in (a, b):
            pool.serve([catalog.get(t)])
        url = pool.lease(a)  # a call in flight on a, the least recently used
        pool.url_for(b)
        pool.serve([catalog.get(c)])
        assert pool.serves(a) and url in pool.live_urls() and not pool.serves(b)
        pool.release(url)
    finally:
        pool.close()


async def test_idle_groups_are_stopped(bwrap, catalog):
    pool = ServicePool(bwrap, idle_s=0.5)
    client = ServiceTargetClient(catalog, pool)
    try:
        await client.call(IDS[0], ["1"])
        pids = _alive(pool)
        assert pids
        deadline = time.monotonic() + 10
        while pool.handles() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert pool.handles() == []
        time.sleep(0.3)
        assert not any(_running(p) for p in pids)
        out = await client.call(IDS[0], ["0"])
        assert out[0].output == "-5.0"  # f00473: -1.5*x - 5.0
    finally:
        await client.aclose()
        pool.close()


async def test_concurrent_calls_survive_a_shared_instance_dying(bwrap, catalog):
    # A run's targets share one prewarmed instance: when it dies, every in-flight call sees it;
    # one restarts it and the others use the new instance (they used to fail with KeyError).
    import signal

    pool = ServicePool(bwrap)
    client = ServiceTargetClient(catalog, pool)
    try:
        await client.prewarm(IDS[:2])
        (h,) = pool.handles()
        await client.call(IDS[0], ["0"])  # clients connected
        os.killpg(h.meta["pid"], signal.SIGKILL)
        time.sleep(0.2)
        outs = await asyncio.gather(*(client.call(IDS[k % 2], ["0"]) for k in range(4)))
        assert all(o[0].error is None and o[0].output is not None for o in outs), outs
        assert outs[0][0].output == "-5.0"  # f00473 at 0
        assert h.url not in pool.live_urls() and len(pool.handles()) == 1
        assert all(g.leases == 0 for g in pool._groups)  # every lease released
    finally:
        await client.aclose()
        pool.close()
