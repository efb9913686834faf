"""Entity calls through the sandboxed target service: batched (one backbone batch per call, shared
prefix computed once) vs one backbone request per word, in order (FIND's way). Prints both and
the ratio.

    python benchmarks/backbone.py [--calls 200] [--words 10] [--backend bwrap|inprocess] [--url URL]

It starts the project's backbone server (SmolLM2-135M, CPU; `--url` names a running one) and two
target services in the chosen
sandbox (bwrap: no network; the backbone is reached through the forwarded socket, as in a run),
one per mode; each call is one `PYTHON(...)` with `--words` words (the target's own exemplar
words), on the first `--calls` find-v1 entity targets. Calls alternate between the modes, so both
see the same load on a shared machine.

The test suite's smoke form (tests/benchmarks): `--url URL --calls 2 --words 2`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]

from serving import free_port, serve  # noqa: E402

from interp_harness.function_store.catalog import Catalog  # noqa: E402
from interp_harness.function_store.models import Target  # noqa: E402


def words_for(t: Target, n: int) -> list[str]:
    w = list(dict.fromkeys(t.exemplars))
    fill = ["river", "piano", "justice", "volcano", "salary", "comet", "tulip", "bishop"]
    return (w + [x for x in fill if x not in w])[:n]


async def side_by_side(urls: dict[str, str], targets: list[Target], n_words: int) -> dict:
    from interp_harness.function_store.service.client import TargetServiceClient

    clients = {m: TargetServiceClient(u, timeout_s=3600) for m, u in urls.items()}
    times = dict.fromkeys(urls, 0.0)
    outs: dict[str, list] = {m: [] for m in urls}
    with Progress() as bar:
        task = bar.add_task(
            f"{len(targets)} calls x {n_words} words, both modes", total=len(targets)
        )
        for t in targets:
            for m, c in clients.items():
                t0 = time.perf_counter()
                outs[m].append(await c.call(t.id, words_for(t, n_words)))
                times[m] += time.perf_counter() - t0
            bar.advance(task)
    for c in clients.values():
        await c.aclose()
    return {m: (times[m], outs[m]) for m in urls}


def main() -> None:
    from interp_harness.harness.sandbox import Limits, get_sandbox
    from interp_harness.harness.sandbox.pool import ServicePool

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200, help="entity calls (targets f00000...)")
    ap.add_argument("--words", type=int, default=10, help="words per call")
    ap.add_argument("--backend", default="bwrap", choices=["bwrap", "inprocess"])
    ap.add_argument("--url", default=None, help="a running backbone server (else one is started)")
    a = ap.parse_args()
    os.environ.setdefault("HARNESS_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    targets = Catalog().list(dataset="find-v1", family="entities")[: a.calls]

    log = Path(tempfile.mkdtemp(prefix="bench-backbone-")) / "backbone.log"
    proc = None
    pools: list[ServicePool] = []
    try:
        if a.url:
            backbone = a.url.rstrip("/").removesuffix("/v1")
        else:
            bport = free_port()
            backbone = f"http://127.0.0.1:{bport}"
            argv = [sys.executable, "-m", "interp_harness.model_services.backbone"]
            proc = serve(argv, bport, log)
        # warm-up: first forward passes allocate and are slower
        httpx.post(
            backbone + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1},
            timeout=600,
        )
        sandbox = get_sandbox(a.backend)
        urls = {}
        for mode, batch in {"batched": "auto", "one request per word": "sequential"}.items():
            pool = ServicePool(
                sandbox,
                limits=Limits(timeout_s=60, memory_mb=2048),
                env={
                    "HARNESS_SERVICE_CALL_TIMEOUT_S": "3600",
                    "HARNESS_BACKBONE_BATCH": batch,
                    "HARNESS_BACKBONE_TIMEOUT": "3600",
                },
                backbone_url=backbone + "/v1",
            )
            pools.append(pool)
            pool.serve(targets)
            urls[mode] = pool.handles()[0].url
        results = asyncio.run(side_by_side(urls, targets, a.words))

        (tb, ob), (ts, os_) = results["batched"], results["one request per word"]
        errors = sum(o.error is not None for call in ob + os_ for o in call)
        diffs = [
            abs(float(x.output) - float(y.output))
            for cb, cs in zip(ob, os_, strict=True)
            for x, y in zip(cb, cs, strict=True)
            if x.output is not None and y.output is not None
        ]
        n = len(targets)
        print(
            f"path: target service in the {a.backend} sandbox; "
            f"backbone: SmolLM2-135M-Instruct on CPU ({os.cpu_count()} cores)"
        )
        print(f"calls: {n} entity targets x {a.words} words = {n * a.words} scores per mode")
        print(f"batched (one backbone batch per call): {tb:.2f} s  ({tb / n:.3f} s/call)")
        print(f"one request per word (FIND's way):     {ts:.2f} s  ({ts / n:.3f} s/call)")
        print(f"speed-up: {ts / tb:.2f}x")
        print(
            f"max |score difference|: {max(diffs, default=0):.2e} over {len(diffs)} scores; "
            f"errors: {errors}"
        )
    finally:
        for pool in pools:
            pool.close()
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
