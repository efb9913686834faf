"""Entity calls through the target path: batched (one backbone batch per call, shared prefix computed
once) vs one backbone request per word, in order (FIND's way). Prints both and the ratio.

    python benchmarks/backbone.py [--calls 200] [--words 10] [--in-process]

It starts the project's backbone server (SmolLM2-135M, CPU) and, unless --in-process, two target
services (`python -m function_store.service`, over loopback TCP, unsandboxed: the sandbox adds the
same constant to both sides), one per mode; each call is one `PYTHON(...)` with `--words` words
(the target's own exemplar words), on the first `--calls` find-v1 entity targets.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from function_store.catalog import Catalog  # noqa: E402
from function_store.models import Target  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, what: str, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{what} did not start in {timeout:.0f}s")


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as fh:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)


def words_for(t: Target, n: int) -> list[str]:
    w = list(dict.fromkeys(t.exemplars))
    fill = ["river", "piano", "justice", "volcano", "salary", "comet", "tulip", "bishop"]
    return (w + [x for x in fill if x not in w])[:n]


async def via_services(urls: dict[str, str], targets: list[Target], n_words: int) -> dict:
    """Calls alternate between the modes, so both see the same load on a shared machine."""
    from function_store.service.client import TargetServiceClient

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


def in_process(backbone: str, targets: list[Target], n_words: int, modes: dict[str, str]) -> dict:
    from function_store.neural.client import BackboneSettings
    from function_store.runtime import RuntimeContext, build_runner

    ctxs = {
        m: RuntimeContext(backbone=BackboneSettings(url=backbone, batch=b, timeout_s=3600))
        for m, b in modes.items()
    }
    times = dict.fromkeys(modes, 0.0)
    outs: dict[str, list] = {m: [] for m in modes}
    with Progress() as bar:
        task = bar.add_task(
            f"{len(targets)} calls x {n_words} words, both modes", total=len(targets)
        )
        for t in targets:
            for m, ctx in ctxs.items():
                runner = build_runner(t, ctx)
                t0 = time.perf_counter()
                outs[m].append(runner.call(words_for(t, n_words)))
                times[m] += time.perf_counter() - t0
            bar.advance(task)
    return {m: (times[m], outs[m]) for m in modes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200, help="entity calls (targets f00000...)")
    ap.add_argument("--words", type=int, default=10, help="words per call")
    ap.add_argument("--in-process", action="store_true", help="call the runner in this process")
    a = ap.parse_args()
    os.environ.setdefault("HARNESS_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    targets = Catalog().list(dataset="find-v1", family="entities")[: a.calls]

    tmp = Path(tempfile.mkdtemp(prefix="bench-backbone-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen] = []
    try:
        bport = free_port()
        backbone = f"http://127.0.0.1:{bport}"
        procs.append(
            start(
                [sys.executable, "-m", "function_store.backbone", "--port", str(bport)],
                env,
                tmp / "backbone.log",
            )
        )
        wait_http(backbone + "/health", procs[-1], "backbone server")
        # warm-up: first forward passes allocate and are slower
        httpx.post(
            backbone + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1},
            timeout=600,
        )

        modes = {"batched": "auto", "one request per word": "sequential"}
        if a.in_process:
            results = in_process(backbone, targets, a.words, modes)
        else:
            urls = {}
            for mode, batch in modes.items():
                tdir = tmp / f"targets-{batch}"
                tdir.mkdir()
                for i, t in enumerate(targets):
                    (tdir / f"{i:05d}.json").write_text(t.model_dump_json())
                sport = free_port()
                senv = {
                    **env,
                    "HARNESS_SERVICE_TARGETS_DIR": str(tdir),
                    "HARNESS_SERVICE_HOST": "127.0.0.1",
                    "HARNESS_SERVICE_PORT": str(sport),
                    "HARNESS_SERVICE_CALL_TIMEOUT_S": "3600",
                    "HARNESS_BACKBONE_URL": backbone + "/v1",
                    "HARNESS_BACKBONE_BATCH": batch,
                    "HARNESS_BACKBONE_TIMEOUT": "3600",
                }
                log = tmp / f"service-{batch}.log"
                procs.append(start([sys.executable, "-m", "function_store.service"], senv, log))
                urls[mode] = f"http://127.0.0.1:{sport}"
                wait_http(urls[mode] + "/healthz", procs[-1], "target service")
            results = asyncio.run(via_services(urls, targets, a.words))

        (tb, ob), (ts, os_) = results["batched"], results["one request per word"]
        errors = sum(o.error is not None for call in ob + os_ for o in call)
        diffs = [
            abs(float(x.output) - float(y.output))
            for cb, cs in zip(ob, os_, strict=True)
            for x, y in zip(cb, cs, strict=True)
            if x.output is not None and y.output is not None
        ]
        path = (
            "runner in-process"
            if a.in_process
            else "target service (python -m function_store.service, loopback TCP)"
        )
        print(f"path: {path}; backbone: SmolLM2-135M-Instruct on CPU ({os.cpu_count()} cores)")
        print(
            f"calls: {len(targets)} entity targets x {a.words} words = {len(targets) * a.words} scores per mode"
        )
        print(
            f"batched (one backbone batch per call): {tb:.2f} s  ({tb / len(targets):.3f} s/call)"
        )
        print(
            f"one request per word (FIND's way):     {ts:.2f} s  ({ts / len(targets):.3f} s/call)"
        )
        print(f"speed-up: {ts / tb:.2f}x")
        print(
            f"max |score difference|: {max(diffs, default=0):.2e} over {len(diffs)} scores; errors: {errors}"
        )
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    main()
