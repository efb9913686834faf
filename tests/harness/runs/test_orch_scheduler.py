"""Scheduler: round-robin between runs, per-provider limits, cancellation (in process, SQLite)."""

from __future__ import annotations

import asyncio

import orch_plugin  # noqa: F401  (registers the orch-test dataset this file selects from)
import pytest
from support.orch_helpers import run_in_process

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import make_target_client

NUMERIC = [f"orch-test/numeric/f{i:05d}" for i in range(6)]


def _spec(agent: str = "orch_agents:ProbeAgent", ids=NUMERIC, **kw) -> RunSpec:  # type: ignore[no-untyped-def]
    return RunSpec.model_validate({"agent": agent, "dataset": "orch-test", "ids": ids, **kw})


def _started_order(store: Store, run_ids: list[str]) -> list[str]:
    events = sorted(
        (e for r in run_ids for e in store.events.of_run(r) if e.kind == "episode_started"),
        key=lambda e: e.id,
    )
    return [e.run_id for e in events]


async def test_round_robin_between_runs(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    cfg = Settings(sandbox="inprocess", max_concurrency=1, poll_interval_s=0.05)
    cats = CatalogCache()
    big = create_run(store, _spec(ids=NUMERIC[:4]), cats)
    small = create_run(store, _spec(ids=NUMERIC[4:]), cats)
    sched = Scheduler(store, make_target_client(cfg, cats), settings=cfg, catalogs=cats)
    sched.start()
    try:
        for r in (big, small):
            assert (await sched.wait_run(r.id, poll_s=0.02)).status == "completed"
    finally:
        await sched.stop()
    # one slot: episodes alternate between the runs until the small one is done
    b, s = big.id, small.id
    assert _started_order(store, [b, s]) == [b, s, b, s, b, b]


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    points = sorted([(a, 1) for a, _ in intervals] + [(z, -1) for _, z in intervals])
    best = cur = 0
    for _, d in points:
        cur += d
        best = max(best, cur)
    return best


@pytest.mark.slow
async def test_per_provider_limit(sqlite_url: str) -> None:
    # steps long enough that concurrent episodes overlap despite each agent host's start-up
    opts = {"agent_options": {"n_calls": 2, "delay": 0.4}}
    store, runs = await run_in_process(
        sqlite_url,
        _spec("orch_agents:SlowProviderAgent", ids=NUMERIC[:4], **opts).model_dump(),
        max_concurrency=4,
        provider_limits='{"orch-slow": 1}',
    )
    eps = store.episodes.of_run(runs[0].id)
    assert all(e.status == "completed" for e in eps)
    spans = [(e.started_at.timestamp(), e.finished_at.timestamp()) for e in eps]
    assert _max_overlap(spans) == 1
    # the same agent under an unlimited provider runs its episodes side by side
    store2, runs2 = await run_in_process(
        sqlite_url,
        _spec(ids=NUMERIC[:4], **opts).model_dump(),
        max_concurrency=4,
        provider_limits='{"orch-slow": 1}',
    )
    eps2 = store2.episodes.of_run(runs2[0].id)
    assert _max_overlap([(e.started_at.timestamp(), e.finished_at.timestamp()) for e in eps2]) >= 2


async def test_cancel_a_running_run(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    cfg = Settings(sandbox="inprocess", max_concurrency=2, poll_interval_s=0.05)
    cats = CatalogCache()
    run = create_run(
        store, _spec(ids=NUMERIC[:4], agent_options={"n_calls": 50, "delay": 0.05}), cats
    )
    sched = Scheduler(store, make_target_client(cfg, cats), settings=cfg, catalogs=cats)
    sched.start()
    try:
        for _ in range(200):
            if sum(len(store.episodes.messages(e.id)) for e in store.episodes.of_run(run.id)) >= 6:
                break
            await asyncio.sleep(0.02)
        assert sched.cancel_run(run.id)
        assert not sched.cancel_run(run.id)  # already ended
        final = await sched.wait_run(run.id)
        before = {e.id: len(store.episodes.messages(e.id)) for e in store.episodes.of_run(run.id)}
        await asyncio.sleep(0.3)
        after = {e.id: len(store.episodes.messages(e.id)) for e in store.episodes.of_run(run.id)}
    finally:
        await sched.stop()
    assert final.status == "cancelled"
    assert {e.status for e in store.episodes.of_run(run.id)} == {"cancelled"}
    assert before == after  # nothing ran after the cancellation
    assert sum(before.values()) < 4 * 100


def test_catalog_cache_is_bounded() -> None:
    # An API caller can name any find-gen seed (`GET /targets?gen_seed=N`); each catalog holds a
    # generated set (~20 MB), so only the most recently used few are kept.
    from interp_harness.harness.domain.catalogs import CatalogCache

    cache = CatalogCache(max_seeds=3)
    kept = cache.get(0)
    for seed in range(1, 10):
        cache.get(seed)
        cache.get(0)  # the server's own seed stays in use
    assert cache.seeds() == [8, 9, 0]
    assert cache.get(0) is kept
    assert cache.get(1) is not None and cache.seeds() == [9, 0, 1]
