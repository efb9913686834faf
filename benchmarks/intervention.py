"""Intervention service speed: activations for 512 texts in one request vs one request per text, and
interchange pairs/s for 256 (base, source) pairs (Paper B's pair count). Starts the service itself
(real HTTP on loopback; `--url` names a running one) and prints texts/s, pairs/s and the ratio; on
CUDA also the server's peak GPU memory.

    python benchmarks/intervention.py [--model gpt2-tiny-random|gpt2-xl-random|smollm2|<hf id>]
                                      [--device cpu|cuda] [--texts 512] [--pairs 256] [--url URL]

The test suite's smoke form (tests/benchmarks): `--url URL --texts 3 --pairs 2`.
"""

from __future__ import annotations

import argparse
import random
import time

import httpx
from serving import free_port, serve, stop

from interp_harness.model_services.intervention.client import InterventionClient, serve_argv

WORDS = "the city river music old new red small bright quiet people market north garden".split()


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--port", type=int, default=None, help="for the started server (default: free)")
    ap.add_argument("--url", default=None, help="a running service (else one is started)")
    args = ap.parse_args()
    proc, url = None, args.url
    if url is None:
        port = args.port or free_port()
        proc = serve([*serve_argv(args.model), "--device", args.device], port)
        url = f"http://127.0.0.1:{port}"
    try:
        c = InterventionClient(url)
        info = c.model()
        mid = info.n_layers // 2
        print(
            f"model {info.id} ({info.family}, {info.n_layers} layers) on {info.device}, {info.dtype}"
        )
        body = {
            "component": "mlp_activation",
            "layers": [mid],
            "positions": "all",
            "pooling": "max",
        }
        xs = texts(args.texts, 0)
        c.activations({**body, "texts": xs[:4]})  # warm-up
        t = time.perf_counter()
        c.activations({**body, "texts": xs})
        batched = len(xs) / (time.perf_counter() - t)
        t = time.perf_counter()
        for x in xs:
            c.activations({**body, "texts": [x]})
        single = len(xs) / (time.perf_counter() - t)
        print(
            f"activations, {len(xs)} texts: batched {batched:.1f} texts/s, "
            f"one request per text {single:.1f} texts/s, ratio {batched / single:.1f}x"
        )
        bases, sources = texts(args.pairs, 1), texts(args.pairs, 2)
        site = {
            "layer": mid,
            "component": "mlp_activation",
            "base_positions": "last",
            "neurons": list(range(64)),
        }
        ex = [{"base": b, "sources": [s]} for b, s in zip(bases, sources, strict=True)]
        t = time.perf_counter()
        c.interchange({"examples": ex, "sites": [site], "top_k": 10})
        pairs = len(ex) / (time.perf_counter() - t)
        print(
            f"interchange, {len(ex)} pairs (with and without intervention, top-10): {pairs:.1f} pairs/s"
        )
        health = httpx.get(url + "/health").json()
        if "peak_gpu_memory_mib" in health:
            print(f"peak GPU memory (server): {health['peak_gpu_memory_mib']:.0f} MiB")
        else:
            print("peak GPU memory: not on CUDA (no GPU in this run)")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
