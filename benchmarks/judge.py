"""Unit tests judged per second on the project's own server: batched forced choice vs one
forced-choice request per test vs FIND's generate path (one generated reply per test).

Prompts: the 10 unit tests of N find-gen string targets with their ground-truth descriptions (the
judge ceiling's prompts), N=10 by default, i.e. 100 unit tests. The server is started here
(SmolLM2-135M, loopback) unless --url names a running one. "One request per test" sends them one
after another (concurrent requests would be grouped by the server's queue anyway). Each path
judges the same prompts;
the ratio against one request per test is printed, and the generate path is skipped with
--no-generate (on a loaded 2-core CPU it takes minutes).

    python benchmarks/judge.py [--url http://127.0.0.1:8000/v1] [--n 10] [--tests K] [--no-generate]

`--tests K` judges the first K of those unit tests only. The test suite's smoke form
(tests/benchmarks): `--url URL --n 1 --tests 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from interp_harness.evaluator.judge import OpenAICompatibleJudge
from interp_harness.evaluator.strings.scorer import PROMPT as STRINGS
from interp_harness.evaluator.unit_tests import OPTIONS, PREFILL, SYSTEM_PROMPT, fill, load_template
from interp_harness.function_store.catalog import Catalog

ROOT = Path(__file__).resolve().parents[1]


def _start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "interp_harness.model_services.backbone", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return proc, url + "/v1"
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("server did not start in 600 s")


async def _timed(label: str, coro, n: int) -> tuple[float, list[int]]:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    choices = await coro
    dt = time.perf_counter() - t
    print(f"{label:<36} {n:>5} tests  {dt:8.2f} s  {n / dt:8.2f} tests/s", flush=True)
    return n / dt, choices


def ceiling_prompts(n: int) -> tuple[list[str], list[int]]:
    """The unit-test prompts of the first `n` find-gen string targets with their ground-truth
    descriptions (the judge ceiling's prompts), and each test's correct index."""
    template, _ = load_template(STRINGS)
    targets = Catalog().list(dataset="find-gen", family="strings")[:n]
    prompts = [fill(template, t.hidden.description, u) for t in targets for u in t.unit_tests]
    return prompts, [u.correct for t in targets for u in t.unit_tests]


async def run(url: str, n: int, generate: bool, tests: int | None = None) -> None:
    model = httpx.get(url + "/models", timeout=10).json()["data"][0]["id"]
    prompts, correct = ceiling_prompts(n)
    prompts, correct = prompts[:tests], correct[:tests]
    batched = OpenAICompatibleJudge(url, model, mode="forced-choice", timeout_s=3600)
    single = OpenAICompatibleJudge(url, model, mode="forced-choice", batch=False, timeout_s=3600)
    gen = OpenAICompatibleJudge(url, model, mode="generate", timeout_s=3600, max_tokens=32)
    try:
        # warm-up (first-call allocations), not timed
        await batched.choose(SYSTEM_PROMPT, prompts[:2], OPTIONS, PREFILL)

        async def fc_batch() -> list[int]:
            replies = await batched.choose(SYSTEM_PROMPT, prompts, OPTIONS, PREFILL)
            return [int(OPTIONS[r.choice]) for r in replies]

        async def fc_one_by_one() -> list[int]:
            out = []
            for p in prompts:
                (r,) = await single.choose(SYSTEM_PROMPT, [p], OPTIONS, PREFILL)
                out.append(int(OPTIONS[r.choice]))
            return out

        async def gen_all() -> list[int]:
            sem = asyncio.Semaphore(8)  # JudgeSettings.concurrency's default

            async def one(p: str) -> int:
                async with sem:
                    text = (await gen.complete(SYSTEM_PROMPT, p)).text
                return next((int(c) for c in text if c in "123"), 0)

            return list(await asyncio.gather(*(one(p) for p in prompts)))

        k = len(prompts)
        rate_b, ch_b = await _timed("forced choice, one batch request", fc_batch(), k)
        rate_s, ch_s = await _timed("forced choice, one request per test", fc_one_by_one(), k)
        rows = [("batched / one request per test", rate_b / rate_s)]
        if generate:
            rate_g, ch_g = await _timed("generate (FIND's path), max_tokens 32", gen_all(), k)
            rows.append(("batched forced choice / generate", rate_b / rate_g))
            acc_g = sum(a == c for a, c in zip(ch_g, correct, strict=True)) / k
            print(f"generate: accuracy on ground-truth descriptions {acc_g:.3f}")
        for label, ratio in rows:
            print(f"ratio {label}: {ratio:.1f}x")
        same = sum(a == b for a, b in zip(ch_b, ch_s, strict=True))
        acc = sum(a == c for a, c in zip(ch_b, correct, strict=True)) / k
        print(
            f"forced choice: same verdict batched vs single {same}/{k}; ceiling {acc:.3f} "
            f"(chance 0.333)"
        )
    finally:
        for j in (batched, single, gen):
            await j.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None, help="a running server's /v1 URL (else one is started)")
    ap.add_argument("--n", type=int, default=10, help="string targets (10 unit tests each)")
    ap.add_argument("--tests", type=int, default=None, help="the first K unit tests (default: all)")
    ap.add_argument("--no-generate", action="store_true", help="skip FIND's generate path")
    a = ap.parse_args()
    proc = None
    url = a.url
    if url is None:
        proc, url = _start_server()
    try:
        asyncio.run(run(url.rstrip("/"), a.n, not a.no_generate, a.tests))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
