"""MCP round trip of one tool call against a plain loopback HTTP call (issue 30 acceptance).

MCP: the official `mcp` SDK client calls `call_function` on an episode's endpoint
(harness/mcp/server.py, Streamable HTTP on loopback); the episode's side is the real channel and
the agent `external`, answered at once by a minimal loop (no target: this measures the transport
and the rendezvous, not the target call, which benchmarks/target_calls.py measures). Plain HTTP:
one JSON POST to a Starlette route on the same kind of uvicorn server, with `httpx2` (the SDK's
own HTTP client). Sequential calls, one client each; p50 / p95 in milliseconds.

    python benchmarks/mcp_latency.py [--n 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from agents.base import Message  # noqa: E402
from function_store.benchmark import benchmark  # noqa: E402
from harness.mcp.agent import ExternalAgent  # noqa: E402
from harness.mcp.channel import Rendezvous  # noqa: E402
from harness.mcp.server import McpApp, McpServer  # noqa: E402

REPLY = "Response: Function input - output pairs: (1, 3.0) \n"


async def answer_every_call(agent: ExternalAgent) -> None:
    """The episode loop reduced to what the transport needs: each call answered at once."""
    tools = list(benchmark("numeric").commands)
    conv = [Message(role="system", content="s"), Message(role="user", content="u")]
    while True:
        (call,) = (await agent.step(conv, tools=tools)).tool_calls
        conv = conv[:2] + [
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content=REPLY, tool_call_id=call.id),
        ]


async def mcp_times(n: int) -> list[float]:
    rv = Rendezvous()
    ch = rv.open("ep", "numeric")
    loop = asyncio.create_task(answer_every_call(ExternalAgent(episode_id="ep", rendezvous=rv)))
    server = McpServer(McpApp(rv))
    await server.start()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ch.token}"})
    out = []
    try:
        async with Client(streamable_http_client(f"{server.base_url}/ep", http_client=http)) as c:
            await c.list_tools()
            for _ in range(n):
                t = time.perf_counter()
                r = await c.call_tool("call_function", {"inputs": ["1"]})
                out.append(time.perf_counter() - t)
                assert r.content[0].text == REPLY  # type: ignore[union-attr]
    finally:
        loop.cancel()
        await server.stop()
    return out


async def http_times(n: int) -> list[float]:
    async def echo(request: Request) -> JSONResponse:
        await request.json()
        return JSONResponse({"text": REPLY})

    server = McpServer(Starlette(routes=[Route("/call", echo, methods=["POST"])]))  # type: ignore[arg-type]
    await server.start()
    out = []
    try:
        async with httpx2.AsyncClient() as http:
            url = f"http://127.0.0.1:{server.port}/call"
            for _ in range(n):
                t = time.perf_counter()
                r = await http.post(url, json={"inputs": ["1"]})
                out.append(time.perf_counter() - t)
                assert r.json()["text"] == REPLY
    finally:
        await server.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    n = ap.parse_args().n
    table = Table("round trip (one client, sequential)", "p50 ms", "p95 ms", "n")
    for name, fn in [("plain loopback HTTP POST", http_times), ("MCP tools/call", mcp_times)]:
        times = sorted(asyncio.run(fn(n + 20))[20:])  # the first 20 warm up
        p50, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
        table.add_row(name, f"{p50 * 1e3:.2f}", f"{p95 * 1e3:.2f}", str(len(times)))
    Console().print(table)


if __name__ == "__main__":
    main()
