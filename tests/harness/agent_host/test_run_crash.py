"""Crash safety through the scheduler: kill -9 an episode's agent host mid-step; the step is asked
again from a fresh host and every step is stored exactly once."""

from __future__ import annotations

import asyncio
import os
import signal

from test_host import host_python_pids

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import make_target_client

N = 6


async def test_kill_9_of_the_host_mid_step_duplicates_nothing(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    import orch_plugin  # noqa: F401 - registers the orch-test targets (f(x) = 2x + 1)

    store = Store(make_engine(f"sqlite:///{tmp_path / 'h.db'}"))
    cfg = Settings(sandbox="inprocess", poll_interval_s=0.05)
    cats = CatalogCache()
    spec = RunSpec.model_validate(
        {
            "agent": "host_test_agents:SleepyProbeAgent",
            "agent_options": {"delay": 0.4, "n_calls": N},
            "dataset": "orch-test",
            "ids": ["orch-test/numeric/f00000"],
            "floor": False,
        }
    )
    run = create_run(store, spec, cats)
    sched = Scheduler(store, make_target_client(cfg, cats), settings=cfg, catalogs=cats)
    sched.start()
    try:
        # wait until three agent messages are stored, then kill the host during the fourth step
        while not (eps := store.episodes.of_run(run.id)) or eps[0].rounds < 3:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        pids = [p for c in _bwrap_children() for p in host_python_pids(c)]
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGKILL)
        done = await sched.wait_run(run.id, poll_s=0.05)
    finally:
        await sched.stop()
    assert done.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert [m.step for m in msgs] == list(range(2 * N + 3))
    assistant = [m.content for m in msgs if m.role == "assistant"]
    assert assistant == [
        f"Probe {k}.\nCOMMAND: PYTHON(./temp/function.py {k})" for k in range(N)
    ] + ["[DESCRIPTION]: done"]
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [[str(k)] for k in range(N)]
    assert (ep.status, ep.rounds, ep.target_calls) == ("completed", N + 1, N)
    assert "died mid-step" in caplog.text  # the kill really hit a step in flight


def _bwrap_children() -> list[int]:
    me = os.getpid()
    out = []
    for task in os.listdir(f"/proc/{me}/task"):
        for kid in open(f"/proc/{me}/task/{task}/children").read().split():
            if open(f"/proc/{kid}/cmdline", "rb").read().startswith(b"/usr/bin/bwrap"):
                out.append(int(kid))
    return out
