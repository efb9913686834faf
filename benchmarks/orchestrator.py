"""Orchestrator throughput: steps per second with a zero-latency agent and an in-memory target.

A step is one full turn of the episode loop: agent reply -> stored -> parsed -> target call ->
reply, calls and counters stored. SQLite (WAL) in a temp directory. The same run is timed twice,
side by side: the agent in this process (agent isolation "none", the baseline) and the agent in
its sandboxed agent host (the default); prints steps/s for each, their ratio, and the p50/p95
latency of one step (time between consecutive stored agent messages of an episode).
`steps_per_s` counts the whole run (host start-up included); `steady_steps_per_s` counts from
the first to the last stored agent message (start-up excluded).

    python benchmarks/orchestrator.py [--episodes 4] [--rounds 250] [--concurrency 4]

The test suite's smoke form (tests/benchmarks): `--episodes 1 --rounds 3 --concurrency 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from zero_agent import ZeroLatencyAgent

from interp_harness.function_store.catalog import CatalogOptions, register_source
from interp_harness.function_store.models import CallOutput, HiddenTruth, PublicMeta, Target
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store


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


class EpisodesFailed(Exception):
    """An episode of the timed run did not end at its round cap (e.g. a mode the agent host
    does not support yet): the run measured something else."""


@dataclass
class Timing:
    """One timed run: its steps (target calls), wall and CPU seconds, and the stored agent
    messages' times (gaps within an episode; all stamps, for the steady rate)."""

    steps: int
    elapsed: float
    cpu: float
    gaps: list[float]
    stamps: list[float]

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.elapsed

    @property
    def steady(self) -> float:
        return self.steps / (max(self.stamps) - min(self.stamps))

    @property
    def cpu_ms_per_step(self) -> float:
        return self.cpu / self.steps * 1e3

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.gaps) * 1e3

    @property
    def p95_ms(self) -> float:
        return statistics.quantiles(self.gaps, n=20)[-1] * 1e3


async def timed_run(
    agent: str,
    episodes: int,
    rounds: int,
    concurrency: int,
    isolation: str,
    mode: str = "default",
) -> Timing:
    """Run `agent` (a dotted path) on `episodes` in-memory targets to the round cap."""
    with tempfile.TemporaryDirectory() as d:
        store = Store(make_engine(f"sqlite:///{d}/bench.db"))
        spec = RunSpec.model_validate(
            {
                "agent": agent,
                "dataset": "bench",
                "family": "numeric",
                "limit": episodes,
                "budgets": {"max_rounds": rounds},
                "protocol": {"mode": mode},
            }
        )
        cats = CatalogCache()
        run = create_run(store, spec, cats)
        cfg = Settings(
            sandbox="inprocess",
            max_concurrency=concurrency,
            poll_interval_s=0.5,
            agent_isolation=isolation,
        )
        sched = Scheduler(store, MemoryTargets(), settings=cfg, catalogs=cats, score_hook=None)
        t0, c0 = time.perf_counter(), time.process_time()
        sched.start()
        await sched.wait_run(run.id, poll_s=0.05)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        await sched.stop()
        eps = store.episodes.of_run(run.id)
        bad = [e for e in eps if e.status != "budget_exhausted" or e.rounds != rounds]
        if bad:
            e = bad[0]
            raise EpisodesFailed(f"{e.status} ({e.end_reason}): {(e.error or '')[:300]}")
        gaps, stamps = [], []
        for e in eps:
            msgs = store.episodes.messages(e.id)
            ts = [m.created_at.timestamp() for m in msgs if m.role == "assistant"]
            gaps += [b - a for a, b in zip(ts, ts[1:], strict=False)]
            stamps += ts
        store.engine.dispose()  # no pooled connection left to a removed file
        return Timing(sum(e.target_calls for e in eps), elapsed, cpu, gaps, stamps)


async def measure(
    episodes: int, rounds: int, concurrency: int, isolation: str
) -> tuple[float, float]:
    agent = f"{ZeroLatencyAgent.__module__}:ZeroLatencyAgent"
    t = await timed_run(agent, episodes, rounds, concurrency, isolation)
    where = "in-process" if isolation == "none" else "agent host (bwrap)"
    print(f"[{where}] episodes={episodes} rounds={rounds} concurrency={concurrency}")
    print(
        f"  steps={t.steps} elapsed_s={t.elapsed:.3f} steps_per_s={t.steps_per_s:.1f} "
        f"steady_steps_per_s={t.steady:.1f}"
    )
    # on a shared machine wall time includes waiting for a core; CPU time per step does not
    # (this process only: an agent host's own CPU time is not counted here)
    print(f"  orchestrator cpu_ms_per_step={t.cpu_ms_per_step:.2f}")
    print(f"  step_latency_ms p50={t.p50_ms:.2f} p95={t.p95_ms:.2f}")
    return t.steps_per_s, t.steady


async def main(episodes: int, rounds: int, concurrency: int) -> None:
    print("backend=sqlite-wal, target=in-memory, agent=zero-latency")
    base = await measure(episodes, rounds, concurrency, "none")
    hosted = await measure(episodes, rounds, concurrency, "bwrap")
    print(
        f"ratio host/in-process: steps_per_s {hosted[0] / base[0]:.2f}, "
        f"steady {hosted[1] / base[1]:.2f} (goal: host >= 300 steps/s)"
    )


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--rounds", type=int, default=250)
    p.add_argument("--concurrency", type=int, default=4)
    a = p.parse_args()
    asyncio.run(main(a.episodes, a.rounds, a.concurrency))
