"""Scale-out throughput: episodes/s of the same run with the local executor and with Ray at 1 and
2 worker nodes on this machine (docs/scale-out.md).

The run: scripted-numeric on N clean find-gen numeric targets, agents in bwrap agent hosts,
targets in bwrap target services, a PostgreSQL store (started here), no scoring (the same cost
on both executors). Each configuration first runs 2 warm-up episodes (worker processes, node
target pools, catalogs), then the timed run from submission to the run's end. Ray nodes get one
CPU each and episodes ask for one CPU, so W nodes run W episodes at once; the local executor is
timed with max_concurrency 1 and 2 to match. Prints episodes/s, the ratios, and Ray's overhead
per episode (1/eps_ray - 1/eps_local at the same concurrency). PostgreSQL and the Ray nodes
are started here (benchmarks/serving.py).

    python benchmarks/scale_out.py [--episodes 20] [--nodes 1 2] [--warm 2]

The test suite's smoke form (tests/benchmarks): `--episodes 1 --nodes 1 --warm 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import tempfile
import time
from pathlib import Path

from serving import create_database, postgres, ray_cluster

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.executors import NoLocalTargets, make_executor
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import make_target_client

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HARNESS_DATA_DIR", str(ROOT.parent / "shared" / "data"))


async def _timed_run(settings: Settings, ids: list[str], n_warm: int) -> float:
    """Episodes/s of one run of `ids` after a warm-up run of `n_warm` targets."""
    store = Store(make_engine(settings.url))
    catalogs = CatalogCache()
    executor = make_executor(settings)
    client = NoLocalTargets() if executor else make_target_client(settings, catalogs)
    sched = Scheduler(store, client, settings=settings, catalogs=catalogs, executor=executor)
    sched.start()
    try:
        for chunk in (ids[:n_warm], ids[n_warm:]):
            spec = RunSpec.model_validate(
                {"agent": "scripted-numeric", "dataset": "find-gen", "ids": chunk, "floor": False}
            )
            t0 = time.perf_counter()
            run = create_run(store, spec, catalogs)
            sched.wake()
            done = await sched.wait_run(run.id)
            dt = time.perf_counter() - t0
            counts = store.episodes.counts(run.id)
            assert done.status == "completed" and counts == {"completed": len(chunk)}, counts
        return len(chunk) / dt
    finally:
        await sched.stop()
        await client.aclose()


def store_tx_per_s(url: str, n: int = 300) -> float:
    """Single-row transactions per second on one connection (the size of an episode's writes:
    one per agent message, one per reply with its target calls, ~4 more per episode)."""
    store = Store(make_engine(url))
    run = store.runs.create(RunSpec(agent="scripted-numeric", dataset="find-gen"), [])
    t0 = time.perf_counter()
    for i in range(n):
        store.events.add(run.id, "bench", {"i": i})
    return n / (time.perf_counter() - t0)


def _ids(n: int, warm: int) -> list[str]:
    # clean targets: a noised one answers differently at each call
    catalog = CatalogCache().get(0)
    clean = [t.id for t in catalog.list(dataset="find-gen", family="numeric", variant="clean")]
    return clean[: warm + n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument(
        "--nodes",
        type=int,
        nargs="+",
        default=[1, 2],
        choices=[1, 2],
        help="Ray node counts (and local concurrencies) timed",
    )
    ap.add_argument("--warm", type=int, default=2, help="warm-up episodes per configuration")
    args = ap.parse_args()
    warm, ns = args.warm, sorted(set(args.nodes))
    ids = _ids(args.episodes, warm)
    base = {"score_hook": "none", "poll_interval_s": 0.1, "home": tempfile.mkdtemp()}
    eps: dict[str, float] = {}
    with postgres(max_connections=200) as pg:
        tx = store_tx_per_s(create_database(pg))
        print(f"PostgreSQL: {tx:.0f} single-row transactions/s on one connection", flush=True)
        for c in ns:
            s = Settings(HARNESS_DATABASE_URL=create_database(pg), max_concurrency=c, **base)
            eps[f"local c={c}"] = asyncio.run(_timed_run(s, ids, warm))
            print(f"local, max_concurrency {c}: {eps[f'local c={c}']:.3f} episodes/s", flush=True)
        token = secrets.token_hex(32)  # one for both clusters: this driver keeps the first
        os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
        for w in ns:
            with ray_cluster(w, cpus_per_node=1, object_store_mb=100, token=token) as address:
                s = Settings(
                    HARNESS_DATABASE_URL=create_database(pg),
                    executor="ray",
                    ray_address=address,
                    max_concurrency=8,
                    **base,
                )
                eps[f"ray w={w}"] = asyncio.run(_timed_run(s, ids, warm))
                print(f"ray, {w} worker node(s): {eps[f'ray w={w}']:.3f} episodes/s", flush=True)
    print()
    print(f"episodes timed per configuration: {args.episodes} (after {warm} warm-up)")
    for w in ns:
        local, ray_ = eps[f"local c={w}"], eps[f"ray w={w}"]
        overhead = 1 / ray_ - 1 / local
        print(
            f"ray {w} node(s) / local at concurrency {w}: {ray_ / local:.2f}x   "
            f"Ray overhead per episode: {overhead * 1000:+.0f} ms "
            f"(episode {1000 / local:.0f} ms local vs {1000 / ray_:.0f} ms on Ray, wall per "
            f"episode at this concurrency)"
        )
    if ns == [1, 2]:
        print(f"ray 2 nodes / ray 1 node: {eps['ray w=2'] / eps['ray w=1']:.2f}x")
        print(f"local c=2 / local c=1: {eps['local c=2'] / eps['local c=1']:.2f}x")
    # a scripted-numeric episode: 6 agent messages + 5 replies + ~4 (start, end, scores, event)
    print(f"store ceiling on one connection: ~{tx / 15:.0f} episodes/s at 15 transactions each")


if __name__ == "__main__":
    main()
