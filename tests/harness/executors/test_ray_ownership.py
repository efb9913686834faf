"""A Ray worker's side of run ownership, on a real PostgreSQL store: the worker runs an episode
with the same code and the same store checks as a Ray task (`execute_episode` with a `RunWatch`,
as `ray_executor._run_here` wires them), without a cluster.

- Its driver stops renewing the run's lease (it died): the worker stops the episode, recording
  nothing more, while the lease is still live, so the process that takes the run over after
  expiry never shares the episode with it.
- The run is cancelled in the store (by any process): the worker ends the episode as cancelled.
"""

from __future__ import annotations

import asyncio
from datetime import UTC

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode.context import EpisodeContext
from interp_harness.harness.episode.runner import LOST
from interp_harness.harness.executors.local import execute_episode
from interp_harness.harness.executors.ray_executor import RunWatch
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import InProcessTargetClient

TID = "find-v1/numeric/f00000"


class Probe(Agent):
    """One function call per step, forever (the round cap is far away)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def step(self, conversation: list[Message]) -> AgentReply:
        self.calls += 1
        await asyncio.sleep(0.05)
        return AgentReply(content=f"COMMAND: PYTHON(./temp/function.py {self.calls})")


async def _episode(store: Store, client: InProcessTargetClient, lease_s: float):  # type: ignore[no-untyped-def]
    spec = RunSpec(agent="probe", dataset="find-v1", ids=[TID], budgets={"max_rounds": 500})
    target = client.catalog.get(TID)
    await client.call(TID, ["0"])  # the target's first call loads it (seconds): not on the lease
    run = store.runs.create(spec, [TID], owner="driver-a", lease_s=lease_s)
    row = {"idx": 0, "target_id": TID, "dataset": "find-v1", "family": "numeric"}
    store.episodes.ensure(run.id, [row | {"variant": target.variant}])
    return run, spec, target, store.episodes.of_run(run.id)[0]


async def _work(store, client, run, spec, target, ep, agent):  # type: ignore[no-untyped-def]
    watch = RunWatch(store, run.id, "driver-a", every_s=0.2)

    async def new_agent() -> Agent:
        return agent

    ctx = EpisodeContext(
        store=store,
        target=target,
        spec=spec,
        client=client,
        should_stop=watch.cancelled,
        owns=watch.owns,
    )
    return await execute_episode(ctx, ep, new_agent)


async def test_worker_stops_before_its_dead_drivers_lease_ends(pg_url: str) -> None:
    store, client = Store(make_engine(pg_url)), InProcessTargetClient(CatalogCache().get(0))
    run, spec, target, ep = await _episode(store, client, lease_s=3)
    agent = Probe()
    # driver-a never renews (it died as the episode began)
    status = await asyncio.wait_for(_work(store, client, run, spec, target, ep, agent), 60)
    assert status == LOST
    expiry = store.runs.get(run.id).lease_expires_at
    msgs = store.episodes.messages(ep.id)
    assert agent.calls >= 5 and len(msgs) >= 5  # it worked while the lease was live
    assert max(m.created_at for m in msgs).astimezone(UTC) < expiry
    assert store.episodes.get(ep.id).status == "running"  # left for the next owner to resume
    # after expiry another process takes the run over; the worker wrote nothing since
    while not store.runs.claim(run.id, "driver-b", 30):
        await asyncio.sleep(0.1)
    assert len(store.episodes.messages(ep.id)) == len(msgs)


async def test_worker_ends_a_cancelled_runs_episode(pg_url: str) -> None:
    store, client = Store(make_engine(pg_url)), InProcessTargetClient(CatalogCache().get(0))
    run, spec, target, ep = await _episode(store, client, lease_s=600)
    agent = Probe()
    work = asyncio.create_task(_work(store, client, run, spec, target, ep, agent))
    while agent.calls < 3:
        await asyncio.sleep(0.05)
    assert store.runs.cancel(run.id)  # as `harness runs cancel` or another server does
    # ended within 30 s: the worker saw the cancel, not its 600 s lease running out
    assert await asyncio.wait_for(work, 30) == "cancelled"
    got = store.episodes.get(ep.id)
    assert (got.status, got.end_reason) == ("cancelled", "cancelled")
