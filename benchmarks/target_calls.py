"""Round trip of one PYTHON(...) call with 10 numeric inputs: our sandboxed service vs FIND's way.

FIND's way (`collect_interpretations.py`): every command spawns `python function_code.py args` (the
file imports numpy and scipy) and reads its stdout. Ours: parse the command, one HTTP call over the
sandbox's Unix socket (or the container network) to a warm target service, format the reply. Both
run in this one process, side by side; then calls/s with 16 concurrent callers.

    python benchmarks/target_calls.py [--backend bwrap|docker|inprocess] [--n 300] [--find-n 40]

The test suite's smoke form (tests/benchmarks): `--n 3 --find-n 2 --callers 2 --per-caller 2`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track

from interp_harness.agents.protocol import format_reply, parse_message
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.numeric.source_text import render_source
from interp_harness.function_store.numeric.variants import served_program
from interp_harness.harness.sandbox import get_sandbox
from interp_harness.harness.sandbox.pool import ServicePool
from interp_harness.harness.target_client import ServiceTargetClient

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HARNESS_DATA_DIR", str(ROOT.parent / "shared" / "data"))


TARGET = "find-v1/numeric/f00473"
INPUTS = ["-128", "-64.5", "-10", "-1", "0", "1", "2.5", "10", "64", "128"]
MESSAGE = "Let me test. COMMAND: PYTHON(./temp/function.py " + " ".join(INPUTS) + ")"


def find_file() -> str:
    """A FIND-format function file (as `write_source_code.py` lays it out) of TARGET's clean
    expression, rendered by the function store."""
    fn = Catalog().get(TARGET).hidden.spec["function"]
    return render_source(served_program(fn, release=True))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def find_way(n: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as d:
        Path(d, "temp").mkdir()
        Path(d, "temp", "function.py").write_text(find_file())
        cmd = parse_message(MESSAGE, mode="find-compat").commands[0]
        for _ in track(range(n), description="FIND way (spawn python per call)"):
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, cmd.path, *cmd.inputs], cwd=d, capture_output=True, check=True
            ).stdout.decode()
            reply = "Response: " + out
            times.append(time.perf_counter() - t0)
    assert reply.startswith("Response: Function input - output pairs: (-128, 187.0)"), reply
    return times


async def ours(client: ServiceTargetClient, n: int) -> list[float]:
    times = []
    for _ in track(range(n), description="sandboxed service"):
        t0 = time.perf_counter()
        cmd = parse_message(MESSAGE).commands[0]
        reply = format_reply(await client.call(TARGET, cmd.inputs))
        times.append(time.perf_counter() - t0)
    assert reply.startswith("Response: Function input - output pairs: (-128, 187.0)"), reply
    return times


async def concurrent(client: ServiceTargetClient, callers: int, per_caller: int) -> float:
    async def one() -> None:
        for _ in range(per_caller):
            cmd = parse_message(MESSAGE).commands[0]
            format_reply(await client.call(TARGET, cmd.inputs))

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(callers)))
    return callers * per_caller / (time.perf_counter() - t0)


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "inprocess"])
    ap.add_argument("--n", type=int, default=300, help="sequential calls through the service")
    ap.add_argument("--find-n", type=int, default=40, help="sequential FIND-style spawns")
    ap.add_argument("--callers", type=int, default=16)
    ap.add_argument("--per-caller", type=int, default=50)
    ap.add_argument("--replicas", type=int, default=1)
    args = ap.parse_args()
    console = Console()

    if args.backend == "docker":
        from interp_harness.harness.sandbox.docker import DockerSandbox
        from interp_harness.harness.sandbox.docker_engine import (
            ensure_engine,
            ensure_target_image,
        )

        c = ensure_engine()
        sandbox = DockerSandbox(client=c, image=ensure_target_image(c))
    else:
        sandbox = get_sandbox(args.backend)
    pool = ServicePool(sandbox, replicas=args.replicas)
    t0 = time.perf_counter()
    pool.serve([Catalog().get(TARGET)])
    start_s = time.perf_counter() - t0
    client = ServiceTargetClient(Catalog(), pool)
    try:
        for _ in range(10):  # warm-up: connection, first runner call
            await client.call(TARGET, INPUTS)
        ours_t = await ours(client, args.n)
        find_t = find_way(args.find_n)
        rate = await concurrent(client, args.callers, args.per_caller)
    finally:
        await client.aclose()
        pool.close()

    p50o, p95o = pct(ours_t, 50) * 1e3, pct(ours_t, 95) * 1e3
    p50f, p95f = pct(find_t, 50) * 1e3, pct(find_t, 95) * 1e3
    console.print(
        f"backend={args.backend} replicas={args.replicas} service start {start_s:.2f} s; "
        f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f}"
    )
    console.print(f"sandboxed service: n={len(ours_t)} p50 {p50o:.2f} ms  p95 {p95o:.2f} ms")
    console.print(f"FIND way (spawn):  n={len(find_t)} p50 {p50f:.2f} ms  p95 {p95f:.2f} ms")
    console.print(
        f"ratio FIND/ours: p50 {p50f / p50o:.1f}x  p95 {p95f / p95o:.1f}x  (goal: >= 50x at p50)"
    )
    console.print(f"{args.callers} concurrent callers: {rate:.1f} calls/s")
    console.print(
        f"(mean ours {statistics.mean(ours_t) * 1e3:.2f} ms, mean FIND {statistics.mean(find_t) * 1e3:.2f} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
