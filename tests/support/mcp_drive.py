"""A scripted strategy run by the official `mcp` SDK client against an episode's MCP endpoint:
the client reads the episode's instructions (the prompt `task`), then lets a scripted baseline
(through the tools adapter, as a native `tools` run does) choose each tool call, and makes that
call over MCP. Only the SDK's client talks to the server: the test reads nothing else of it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from interp_harness.agents.base import Agent, Message
from interp_harness.agents.toolspec import SUBMIT, ToolSpec
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.rendezvous import Rendezvous
from interp_harness.harness.mcp.server import McpApp, McpServer


def mcp_client(url: str, token: str, timeout: float = 600) -> Client:
    """The `mcp` SDK's client of one episode's endpoint (no token: no Authorization header)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=timeout)
    return Client(streamable_http_client(url, http_client=http))


@contextlib.asynccontextmanager
async def served(rv: Rendezvous, **options: Any) -> AsyncIterator[McpServer]:
    """An MCP server over `rv` (McpApp `options`) on a loopback port, stopped afterwards."""
    server = McpServer(McpApp(rv, **options))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def read_endpoints(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


async def drive(
    url: str,
    token: str,
    agent: Agent,
    family: str,
    *,
    reconnect_after: int | None = None,
    stop_after: int | None = None,
    seen: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run `agent` as the episode's external agent; returns what the client saw per call
    (name, arguments, text, is_error). `reconnect_after`: drop the MCP session after that many
    agent steps and go on in a new one with the same token. `stop_after`: return after that many
    steps; `seen`: go on from such a return (the client's memory of the episode)."""
    specs: list[ToolSpec] = list(benchmark(family).commands)
    seen = list(seen or [])
    steps = 1 + max((s["step"] for s in seen), default=-1)
    while True:
        async with mcp_client(url, token) as c:
            listed = (await c.list_tools()).tools
            assert [(t.name, t.input_schema) for t in listed] == [
                (s.name, s.parameters) for s in specs
            ]
            task = await c.get_prompt("task")
            conv = [
                Message(role=role, content=m.content.text)  # type: ignore[union-attr]
                for role, m in zip(["system", "user"], task.messages, strict=True)
            ]
            conv += rebuild(seen)
            while True:
                reply = await agent.step(conv, tools=specs)  # type: ignore[call-arg]
                assert reply.tool_calls, reply
                conv.append(Message(role="assistant", content="", tool_calls=reply.tool_calls))
                for call in reply.tool_calls:
                    r = await c.call_tool(call.name, call.arguments)
                    text = r.content[0].text  # type: ignore[union-attr]
                    seen.append(
                        {
                            "name": call.name,
                            "arguments": call.arguments,
                            "text": text,
                            "is_error": r.is_error,
                            "id": call.id,
                            "step": steps,
                        }
                    )
                    if call.name == SUBMIT:
                        return seen
                    conv.append(
                        Message(
                            role="tool", content=text, tool_call_id=call.id, is_error=r.is_error
                        )
                    )
                steps += 1
                if steps == stop_after:
                    return seen
                if reconnect_after is not None and steps == reconnect_after:
                    reconnect_after = None
                    break  # a new session below, same token: the episode carries on


async def what_it_reads(url: str, token: str) -> list[str]:
    """Every text the server offers the client before any call: the prompt `task`, the tools'
    names, descriptions and schemas."""
    async with mcp_client(url, token) as c:
        task = await c.get_prompt("task")
        tools = (await c.list_tools()).tools
    texts = [m.content.text for m in task.messages]  # type: ignore[union-attr]
    return texts + [f"{t.name} {t.description} {json.dumps(t.input_schema)}" for t in tools]


def rebuild(seen: list[dict[str, Any]]) -> list[Message]:
    """The client's own conversation so far, from what it saw (after a reconnect)."""
    from interp_harness.agents.toolspec import ToolCall

    out: list[Message] = []
    for step in sorted({s["step"] for s in seen}):
        calls = [s for s in seen if s["step"] == step]
        tc = [ToolCall(id=s["id"], name=s["name"], arguments=s["arguments"]) for s in calls]
        out.append(Message(role="assistant", content="", tool_calls=tc))
        out += [
            Message(role="tool", content=s["text"], tool_call_id=s["id"], is_error=s["is_error"])
            for s in calls
        ]
    return out
