"""Orchestrator throughput: steps per second with a zero-latency agent and an in-memory target.

A step is one full turn of the episode loop: agent reply -> stored -> parsed -> target call ->
reply, calls and counters stored. SQLite (WAL) in a temp directory. Prints steps/s and the p95
latency of one step (time between consecutive agent calls of an episode).

    python benchmarks/orchestrator.py [--episodes 4] [--rounds 250] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence

from agents.base import Agent, AgentReply, Message, Usage
from function_store.catalog import CatalogOptions, register_source
from function_store.models import CallOutput, HiddenTruth, PublicMeta, Target
from harness.scheduler import CatalogCache, Scheduler, create_run
from harness.settings import Settings
from harness.store import make_engine
from harness.store.repo import Store
from harness.store.specs import RunSpec

STEP_TIMES: dict[int, list[float]] = {}


class ZeroLatencyAgent(Agent):
    """Answers instantly with one command of three inputs; the round cap ends the episode."""

    provider = "bench"

    async def step(self, conversation: list[Message]) -> AgentReply:
        STEP_TIMES.setdefault(id(self), []).append(time.perf_counter())
        n = len(conversation)
        return AgentReply(
            content=f"Trying more values.\nCOMMAND: PYTHON(./temp/function.py {n} {n + 1} -3.5)",
            usage=Usage(prompt_tokens=100, completion_tokens=20),
        )


class MemoryTargets:
    """An in-memory target client: f(x) = 2x + 1, no process boundary."""

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        return [CallOutput(input=x, output=str(2 * float(x) + 1)) for x in inputs]

    async def aclose(self) -> None:
        pass


@register_source("bench")
def _targets(family: str, options: CatalogOptions) -> list[Target]:
    if family != "numeric":
        return []
    return [
        Target(
            id=f"bench/numeric/f{i:05d}",
            dataset="bench",
            family="numeric",
            variant="clean",
            public=PublicMeta(input_kind="number", prompt_family="numeric"),
            hidden=HiddenTruth(runner="none"),
        )
        for i in range(1000)
    ]


async def main(episodes: int, rounds: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        store = Store(make_engine(f"sqlite:///{d}/bench.db"))
        spec = RunSpec.model_validate(
            {
                "agent": f"{ZeroLatencyAgent.__module__}:ZeroLatencyAgent",
                "dataset": "bench",
                "family": "numeric",
                "limit": episodes,
                "budgets": {"max_rounds": rounds},
            }
        )
        cats = CatalogCache()
        run = create_run(store, spec, cats)
        cfg = Settings(sandbox="inprocess", max_concurrency=concurrency, poll_interval_s=0.5)
        sched = Scheduler(store, MemoryTargets(), settings=cfg, catalogs=cats, score_hook=None)
        t0, c0 = time.perf_counter(), time.process_time()
        sched.start()
        await sched.wait_run(run.id, poll_s=0.05)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        await sched.stop()
        eps = store.episodes(run.id)
        steps = sum(e.target_calls for e in eps)
        assert all(e.status == "budget_exhausted" and e.rounds == rounds for e in eps), eps
        gaps = [b - a for ts in STEP_TIMES.values() for a, b in zip(ts, ts[1:], strict=False)]
        p95 = statistics.quantiles(gaps, n=20)[-1]
        print(f"episodes={episodes} rounds={rounds} concurrency={concurrency} backend=sqlite-wal")
        print(f"steps={steps} elapsed_s={elapsed:.3f} steps_per_s={steps / elapsed:.1f}")
        # on a shared machine wall time includes waiting for a core; CPU time per step does not
        print(
            f"cpu_ms_per_step={cpu / steps * 1e3:.2f} (cpu-bound ceiling {steps / cpu:.0f} steps/s)"
        )
        print(f"step_latency_ms p50={statistics.median(gaps) * 1e3:.2f} p95={p95 * 1e3:.2f}")


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--rounds", type=int, default=250)
    p.add_argument("--concurrency", type=int, default=4)
    a = p.parse_args()
    asyncio.run(main(a.episodes, a.rounds, a.concurrency))
