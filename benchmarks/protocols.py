"""Protocol overhead: protocol mode `tools` against the text protocol (`default`), and an MCP
tool call against a plain loopback HTTP call.

1. Steps/s and per-step cost of the episode loop in each mode, with the zero-latency agent and
   in-memory targets of benchmarks/orchestrator.py (SQLite WAL in a temp directory): `default`
   (text, the baseline), `tools` with the same agent through the text adapter the scripted
   baselines use (agents/tools_adapter.py), and `tools` with native tool calls of the same
   inputs (the episode loop's cost alone). Modes alternate within each repetition; medians of
   the repetitions are printed with their ratios to `default`. CPU ms/step is this process's
   CPU time per step (an agent host's own CPU time is not counted); wall ms/step is the p50 time
   between consecutive agent messages of an episode. `--hosted` times the same in agent hosts
   (bwrap); a mode the host does not support is reported as such.
2. One MCP `tools/call` of `call_function` on a FIND numeric target (an episode of the agent
   `external`, served by interp_harness.harness.mcp's server, called with the official `mcp` SDK client over
   Streamable HTTP) against a plain POST to a trivial loopback HTTP server started here (same
   uvicorn stack), alternating; p50/p95 and their ratios. An MCP `tools/list` (the protocol
   without the episode) is timed beside them.

    python benchmarks/protocols.py [--episodes 4] [--rounds 200] [--concurrency 4] [--reps 3]
        [--hosted] [--mcp-calls 300] [--no-mcp] [--no-steps]

The test suite's smoke form (tests/benchmarks): `--episodes 1 --rounds 3 --concurrency 1 --reps 1
--mcp-calls 2 --mcp-warmup 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from orchestrator import EpisodesFailed, MemoryTargets, Timing, timed_run
from zero_agent import ZeroLatencyTextTools, ZeroLatencyToolsAgent

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

MOD = ZeroLatencyTextTools.__module__
# (label, protocol mode, agent): the first is the baseline
MODES = [
    ("default (text)", "default", f"{MOD}:ZeroLatencyTextTools"),
    ("tools (text adapter)", "tools", f"{MOD}:ZeroLatencyTextTools"),
    ("tools (native calls)", "tools", f"{MOD}:{ZeroLatencyToolsAgent.__name__}"),
]
INPUTS = ["-128", "-64.5", "-10", "-1", "0", "1", "2.5", "10", "64", "128"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def load() -> str:
    return f"cpus={os.cpu_count()} load(1m)={os.getloadavg()[0]:.2f}"


# 1. steps ---------------------------------------------------------------------------------------


async def steps(args: argparse.Namespace, isolation: str) -> None:
    where = "in-process agents" if isolation == "none" else "agents in bwrap agent hosts"
    print(
        f"\n== steps: {where}; episodes={args.episodes} rounds={args.rounds} "
        f"concurrency={args.concurrency} reps={args.reps}; {load()}",
        flush=True,
    )
    runs: dict[str, list[Timing]] = {label: [] for label, _, _ in MODES}
    failed: dict[str, str] = {}
    for rep in range(args.reps + 1):  # rep 0 warms up (imports, first SQLite files, hosts)
        # each repetition starts with the next mode: no mode always runs first or last
        for label, mode, agent in MODES[rep % len(MODES) :] + MODES[: rep % len(MODES)]:
            if label in failed:
                continue
            try:
                t = await timed_run(
                    agent, args.episodes, args.rounds, args.concurrency, isolation, mode
                )
            except EpisodesFailed as e:
                failed[label] = str(e)
                continue
            if rep:
                runs[label].append(t)
    base = runs[MODES[0][0]]
    if not base:
        print(f"  baseline failed: {failed.get(MODES[0][0])}")
        return

    def med(ts: list[Timing], f: Callable[[Timing], float]) -> float:
        return statistics.median(f(t) for t in ts)

    cols: list[tuple[str, Callable[[Timing], float], str]] = [
        ("steps/s", lambda t: t.steps_per_s, "{:9.1f}"),
        ("steady/s", lambda t: t.steady, "{:9.1f}"),
        ("cpu ms/step", lambda t: t.cpu_ms_per_step, "{:11.2f}"),
        ("wall ms/step", lambda t: t.p50_ms, "{:12.2f}"),
        ("p95 ms", lambda t: t.p95_ms, "{:8.2f}"),
    ]
    print(f"  {'mode':22}" + "".join(f" {c[0]:>{len(c[2].format(0))}}" for c in cols))
    for label, _, _ in MODES:
        if label in failed:
            print(f"  {label:22} not measured: {failed[label]}")
            continue
        print(
            f"  {label:22}" + "".join(" " + fmt.format(med(runs[label], f)) for _, f, fmt in cols)
        )
    for label, _, _ in MODES[1:]:
        if label in failed:
            continue
        r = {name: med(runs[label], f) / med(base, f) for name, f, _ in cols}
        print(
            f"  ratio {label} / default: steps/s {r['steps/s']:.2f}x, "
            f"cpu ms/step {r['cpu ms/step']:.2f}x, wall ms/step {r['wall ms/step']:.2f}x"
        )


# 2. MCP -----------------------------------------------------------------------------------------


async def _plain_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The baseline server: reads the body, answers a small JSON object."""
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    body = json.dumps({"ok": True}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def plain_server() -> AsyncIterator[str]:
    """A trivial HTTP server on loopback in this event loop (as the MCP server is); its URL."""
    import uvicorn

    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and an
    # accepted socket inherits the listener's; with proto 0, Nagle and delayed ACKs add ~40 ms
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(_plain_app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        await task
        sock.close()


async def mcp_latency(calls: int, warmup: int) -> None:
    print(f"\n== MCP round trip; calls={calls} (after {warmup} warm-up); {load()}", flush=True)
    try:
        from interp_harness.harness.mcp.server import McpApp, McpServer, issue_endpoints
    except ImportError:
        print("MCP: not available (interp_harness.harness.mcp missing)")
        return
    try:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as e:
        print(f"MCP: not available (the mcp SDK client: {e}; pip install mcp)")
        return
    import httpx

    with tempfile.TemporaryDirectory() as d:
        store = Store(make_engine(f"sqlite:///{d}/bench.db"))
        spec = RunSpec.model_validate(
            {
                "agent": "external",
                "dataset": "bench",
                "family": "numeric",
                "limit": 1,
                "budgets": {"max_rounds": calls + warmup + 2},
                "protocol": {"mode": "tools"},
            }
        )
        cats = CatalogCache()
        run = create_run(store, spec, cats)
        cfg = Settings(sandbox="inprocess", poll_interval_s=0.1, agent_isolation="none")
        sched = Scheduler(store, MemoryTargets(), settings=cfg, catalogs=cats, score_hook=None)
        mcp_server = McpServer(McpApp())
        await mcp_server.start()
        sched.start()
        endpoints = []
        for _ in range(600):  # the scheduler stores the episode when it starts the run
            endpoints = issue_endpoints(store, run.id, mcp_server.base_url)
            if endpoints:
                break
            await asyncio.sleep(0.05)
        (ep,) = endpoints
        mcp_t: list[float] = []
        list_t: list[float] = []
        plain_t: list[float] = []
        try:
            auth = {"Authorization": f"Bearer {ep.token}"}
            async with (
                plain_server() as url,
                httpx.AsyncClient() as plain,
                Client(
                    streamable_http_client(
                        ep.url, http_client=httpx2.AsyncClient(headers=auth, timeout=30)
                    )
                ) as client,
            ):
                args = {"inputs": INPUTS}
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": args}
                for i in range(warmup + calls):  # alternating: MCP call, list, plain POST
                    t0 = time.perf_counter()
                    r = await client.call_tool("call_function", args)
                    t1 = time.perf_counter()
                    await client.list_tools()
                    t2 = time.perf_counter()
                    (await plain.post(url, json=body)).raise_for_status()
                    t3 = time.perf_counter()
                    if r.is_error:
                        raise RuntimeError(f"MCP tool error: {r.content[0].text[:300]}")
                    if i >= warmup:
                        mcp_t.append(t1 - t0)
                        list_t.append(t2 - t1)
                        plain_t.append(t3 - t2)
                reply = r.content[0].text
                await client.call_tool(
                    "submit_answer", {"description": "2x+1", "domain": "all", "code": "f"}
                )
                await sched.wait_run(run.id, poll_s=0.05)
        finally:
            await sched.stop()
            await mcp_server.stop()
        (e,) = store.episodes.of_run(run.id)
        assert e.status == "completed" and e.target_calls == warmup + calls, (e.status, e.error)
    # the text protocol's reply, as a tools-mode result is (f(x) = 2x + 1 of MemoryTargets)
    assert reply.startswith("Response: Function input - output pairs: (-128, -255.0)"), reply
    rows = [
        ("plain HTTP POST (httpx)", plain_t),
        ("MCP tools/list", list_t),
        ("MCP tools/call call_function", mcp_t),
    ]
    print(f"  {'call':32} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for label, ts in rows:
        print(
            f"  {label:32} {pct(ts, 50) * 1e3:8.2f} {pct(ts, 95) * 1e3:8.2f} "
            f"{statistics.mean(ts) * 1e3:8.2f}"
        )
    for label, ts in rows[1:]:
        print(
            f"  ratio {label} / plain POST: p50 {pct(ts, 50) / pct(plain_t, 50):.1f}x, "
            f"p95 {pct(ts, 95) / pct(plain_t, 95):.1f}x"
        )


async def main(args: argparse.Namespace) -> None:
    print(
        f"backend=sqlite-wal, target=in-memory numeric f(x)=2x+1, python {sys.version.split()[0]}"
    )
    if not args.no_steps:
        await steps(args, "none")
        if args.hosted:
            await steps(args, "bwrap")
    if not args.no_mcp:
        await mcp_latency(args.mcp_calls, args.mcp_warmup)


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (after one warm-up)")
    p.add_argument("--hosted", action="store_true", help="also time agents in bwrap agent hosts")
    p.add_argument("--mcp-calls", type=int, default=300)
    p.add_argument("--mcp-warmup", type=int, default=20)
    p.add_argument("--no-mcp", action="store_true")
    p.add_argument("--no-steps", action="store_true")
    a = p.parse_args()
    if a.reps < 1 or a.mcp_calls < 1:
        p.error("--reps and --mcp-calls: at least 1")
    if a.mcp_calls + a.mcp_warmup + 2 > 500:  # the episode's rounds (RunSpec: at most 500)
        p.error("--mcp-calls plus --mcp-warmup: at most 498")
    asyncio.run(main(a))
