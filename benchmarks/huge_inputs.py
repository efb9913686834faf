"""Huge inputs to the model servers (issue 38, item 7): how long each takes to be refused, how long
`/health` stalls meanwhile, and how much the server's peak memory grows.

    python benchmarks/huge_inputs.py [--backbone-only | --intervention-only] [--scale 1.0]
        [--backbone-url URL] [--intervention-url URL]

It starts the project's backbone server (SmolLM2-135M, CPU) and an intervention service on the
same model (or uses the running ones the URLs name: their peak RSS is then not read), then sends, one at a time, the cases of `BACKBONE` and `INTERVENTION` (20 MB and
10 MB chat prompts, a 40 MB `/tokenize` prompt, an allowed 0.6 MB one, a batch of 5,000 one-word
prompts; 10 MB and 20 MB texts to `/v1/activations`; `--scale` multiplies the sizes). While each is in flight another thread asks
`/health` every 100 ms; the figures are the status, the seconds to the answer, the slowest
`/health` answer, the reply's size, and the server's peak RSS (VmHWM) before and after.

The test suite's smoke form (tests/benchmarks): `--backbone-url URL --intervention-url URL --scale
0.00002`.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from serving import free_port, serve, stop

MB = 1_000_000


def start(argv: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    return serve(argv, port, log, timeout=600), f"http://127.0.0.1:{port}"


def peak_rss_mb(proc: subprocess.Popen | None) -> float:
    if proc is None:  # a server this script did not start: not read
        return float("nan")
    for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def attack(
    name: str, proc: subprocess.Popen | None, url: str, send: Callable[[], httpx.Response]
) -> None:
    before = peak_rss_mb(proc)
    worst = [0.0]
    done = threading.Event()

    def watch() -> None:
        with httpx.Client(timeout=300) as c:
            while not done.is_set():
                t = time.monotonic()
                c.get(url + "/health")
                worst[0] = max(worst[0], time.monotonic() - t)
                done.wait(0.1)

    th = threading.Thread(target=watch)
    th.start()
    t = time.monotonic()
    try:
        r = send()
        status, size, took = str(r.status_code), len(r.content), time.monotonic() - t
        message = r.text[:110].replace("\n", " ") if r.status_code >= 400 else ""
    except httpx.HTTPError as e:
        status, size, took, message = type(e).__name__, 0, time.monotonic() - t, str(e)[:110]
    done.set()
    th.join()
    after = peak_rss_mb(proc)
    print(
        f"{name:34s} {status:>5s} {took:7.2f} s  health max {worst[0]:6.2f} s  reply "
        f"{size / MB:6.2f} MB  peak RSS {before:6.0f} -> {after:6.0f} MB (+{after - before:.0f})"
    )
    if message:
        print(f"{'':34s} {message}")


def _chat(n: int) -> dict:
    return {"messages": [{"role": "user", "content": "word " * n}], "max_tokens": 1}


def _texts(n: int) -> dict:
    return {"texts": ["word " * n], "layers": [0], "component": "mlp_output"}


# (name, route, body maker, its argument: repeats of the 5-byte "word ") per server
BACKBONE = [
    ("backbone chat, 20 MB prompt", "/v1/chat/completions", _chat, 4 * MB),
    ("backbone chat, 10 MB prompt", "/v1/chat/completions", _chat, 2 * MB),
    ("backbone /tokenize, 40 MB", "/tokenize", lambda n: {"prompt": "word " * n}, 8 * MB),
    (
        "backbone /tokenize, 0.6 MB (allowed)",
        "/tokenize",
        lambda n: {"prompt": "word " * n},
        120_000,
    ),
    (
        "backbone completions, 5000 prompts",
        "/v1/completions",
        lambda n: {"prompt": ["hi"] * n, "max_tokens": 1},
        5000,
    ),
]
INTERVENTION = [
    ("intervention activations, 10 MB", "/v1/activations", _texts, 2 * MB),
    ("intervention activations, 20 MB", "/v1/activations", _texts, 4 * MB),
]


def run_cases(
    proc: subprocess.Popen | None, url: str, http: httpx.Client, cases: list, scale: float
) -> None:
    for name, route, make, n in cases:
        attack(
            name,
            proc,
            url,
            functools.partial(http.post, url + route, json=make(max(1, int(n * scale)))),
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backbone-only", action="store_true")
    ap.add_argument("--intervention-only", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--backbone-url", default=None, help="a running backbone server")
    ap.add_argument("--intervention-url", default=None, help="a running intervention service")
    a = ap.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="huge-inputs-"))
    os.environ["OMP_NUM_THREADS"] = "2"  # the servers started here
    http = httpx.Client(timeout=600)
    if not a.intervention_only:
        proc, url = None, a.backbone_url
        if url is None:
            argv = [sys.executable, "-m", "interp_harness.model_services.backbone"]
            proc, url = start(argv, logs / "bb.log")
        try:
            http.post(url + "/v1/chat/completions", json=_chat(1))  # warm
            run_cases(proc, url, http, BACKBONE, a.scale)
        finally:
            stop(proc)
    if not a.backbone_only:
        proc, url = None, a.intervention_url
        if url is None:
            argv = [sys.executable, "-m", "interp_harness.harness.cli", "intervention", "serve"]
            proc, url = start([*argv, "--model", "smollm2", "--device", "cpu"], logs / "iv.log")
        try:
            run_cases(proc, url, http, INTERVENTION, a.scale)
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
