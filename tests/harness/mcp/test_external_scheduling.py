"""An external run waits for its MCP clients without holding execution slots (issue 38): with two
slots, an external run of two episodes whose clients never come leaves the slots to a run
submitted after it, and the run view says what it waits for. A client that comes (the official
`mcp` SDK client, through the MCP server on this process's rendezvous) gets its episode started
and carried to its end. In process: the real scheduler, SQLite, the orch-test targets."""

from __future__ import annotations

import asyncio

import orch_plugin  # noqa: F401  (registers the orch-test dataset)
from support.mcp_drive import drive

from interp_harness.agents.registry import get_agent
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.mcp.server import McpApp, McpServer, issue_endpoints
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.runs.views import run_detail
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import make_target_client

NUMERIC = [f"orch-test/numeric/f{i:05d}" for i in range(4)]
TIMEOUT_S = 300  # generous: only a hung run reaches it


def _spec(agent: str, ids: list[str], **kw: object) -> RunSpec:
    return RunSpec.model_validate({"agent": agent, "dataset": "orch-test", "ids": ids, **kw})


async def _until(check, what: str) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(TIMEOUT_S):
        while not check():
            await asyncio.sleep(0.05)
    assert check(), what


async def test_an_external_run_without_clients_leaves_the_slots_to_other_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = Store(make_engine(f"sqlite:///{tmp_path / 'harness.db'}"))
    cfg = Settings(sandbox="inprocess", max_concurrency=2, poll_interval_s=0.05)
    cats = CatalogCache()
    ext = create_run(store, _spec("external", NUMERIC[:2], protocol={"mode": "tools"}), cats)
    sched = Scheduler(store, make_target_client(cfg, cats), settings=cfg, catalogs=cats)
    server = McpServer(McpApp())
    await server.start()
    sched.start()
    try:

        def view() -> list[str]:
            return run_detail(store, store.runs.get(ext.id)).waiting  # type: ignore[arg-type]

        await _until(lambda: len(view()) == 2, "the external run says what it waits for")
        eps = store.episodes.of_run(ext.id)
        waiting = [f"waiting for an MCP client to connect to episode {e.idx} ({e.id})" for e in eps]
        assert view() == waiting
        # submitted after it: runs to its end on the two slots the external run does not hold
        scripted = create_run(store, _spec("orch_agents:ProbeAgent", NUMERIC[2:]), cats)
        sched.wake()
        async with asyncio.timeout(TIMEOUT_S):
            done = await sched.wait_run(scripted.id, poll_s=0.05)
        assert done.status == "completed"
        assert {e.status for e in store.episodes.of_run(ext.id)} == {"queued"}
        assert store.runs.get(ext.id).status == "running"  # type: ignore[union-attr]
        assert view() == waiting

        # the first episode's client comes: its episode starts and runs to its answer
        first = issue_endpoints(store, ext.id, server.base_url)[0]
        seen = await drive(first.url, first.token, get_agent("scripted-numeric"), "numeric")
        assert seen[-1]["text"] == "answer submitted; the episode has ended"
        await _until(
            lambda: (
                store.episodes.get(first.episode_id).status  # type: ignore[union-attr]
                == "completed"
            ),
            "the served episode completes",
        )
        assert view() == waiting[1:]  # the other one still waits, holding no slot
        assert sched.cancel_run(ext.id)
        async with asyncio.timeout(TIMEOUT_S):
            assert (await sched.wait_run(ext.id, poll_s=0.05)).status == "cancelled"
        assert view() == []
    finally:
        await sched.stop()
        await server.stop()
