"""The MCP server and the per-episode channel on their own: the official `mcp` SDK client on
loopback against `McpApp`, with a minimal stand-in for the episode loop driving `ExternalAgent`
(the end-to-end tests with the real loop are in test_external_runs.py)."""

from __future__ import annotations

import asyncio
import socket

import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from support.mcp_drive import mcp_client, served

from interp_harness.agents.base import AgentError, Message
from interp_harness.agents.toolspec import SUBMIT
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.rendezvous import ANSWER_SUBMITTED, Channel, Rendezvous
from interp_harness.harness.mcp.agent import ExternalAgent

FAMILY = "numeric"


async def fake_loop(agent: ExternalAgent, answer: str = "f(x) = x") -> list[Message]:
    """What the episode loop does in tools mode, reduced: each call's result is a tool message;
    call_function echoes its inputs; submit_answer ends the episode."""
    tools = list(benchmark(FAMILY).commands)
    conv = [Message(role="system", content="s"), Message(role="user", content="u")]
    while True:
        reply = await agent.step(list(conv), tools=tools)
        (call,) = reply.tool_calls
        conv.append(Message(role="assistant", content="", tool_calls=[call]))
        if call.name == SUBMIT:
            agent.episode_ended("completed (description)", conv)
            return conv
        known = call.name in {t.name for t in tools}
        text = f"echo {call.arguments}" if known else f"unknown tool {call.name!r}"
        conv.append(Message(role="tool", content=text, tool_call_id=call.id, is_error=not known))


def one_episode() -> tuple[Rendezvous, Channel, ExternalAgent]:
    rv = Rendezvous()
    return rv, rv.open("ep1", FAMILY), ExternalAgent(episode_id="ep1", rendezvous=rv)


async def test_sdk_client_lists_the_benchmark_tools_and_drives_the_episode() -> None:
    rv, ch, agent = one_episode()
    async with served(rv) as server:
        loop = asyncio.create_task(fake_loop(agent))
        async with mcp_client(f"{server.base_url}/ep1", ch.token, timeout=30) as c:
            task = await c.get_prompt("task")
            assert [m.content.text for m in task.messages] == ["s", "u"]
            listed = (await c.list_tools()).tools
            specs = benchmark(FAMILY).commands
            assert [t.name for t in listed] == [s.name for s in specs]
            assert [t.input_schema for t in listed] == [s.parameters for s in specs]
            assert listed[0].description == specs[0].tool_description()
            r = await c.call_tool("call_function", {"inputs": [1, 2]})
            assert (r.is_error, r.content[0].text) == (False, "echo {'inputs': [1, 2]}")
            r = await c.call_tool("no_such_tool", {})
            assert r.is_error and "unknown tool" in r.content[0].text
            r = await c.call_tool(SUBMIT, {"description": "x"})
            assert (r.is_error, r.content[0].text) == (False, ANSWER_SUBMITTED)
        conv = await asyncio.wait_for(loop, 10)
    ids = [c.id for m in conv for c in m.tool_calls]
    assert ids == ["mcp_1", "mcp_2", "mcp_3"]  # deterministic, counted by the episode
    assert ch.ended is not None


async def test_tokens_grant_one_episode_and_expire_with_it() -> None:
    rv = Rendezvous()
    a, b = rv.open("epA", FAMILY), rv.open("epB", FAMILY)
    assert a.token != b.token and len(a.token) >= 32
    agent = ExternalAgent(episode_id="epA", rendezvous=rv)
    async with served(rv) as server:
        url_a, url_b = f"{server.base_url}/epA", f"{server.base_url}/epB"
        for url, token in [(url_b, a.token), (url_a, "not-a-token"), (url_a, "")]:
            with pytest.raises(BaseException) as e:  # the SDK raises in its task group
                async with asyncio.timeout(10), mcp_client(url, token, timeout=30) as c:
                    await c.call_tool("call_function", {"inputs": [1]})
            assert e.group_contains(MCPError, match="error response")
        assert b._pending.empty() and a._pending.empty()  # nothing reached either episode
        # B's own token works on B
        async with mcp_client(url_b, b.token, timeout=30) as c:
            assert (await c.list_tools()).tools
        loop = asyncio.create_task(fake_loop(agent))
        async with mcp_client(url_a, a.token, timeout=30) as c:
            await c.call_tool(SUBMIT, {"description": "x"})
        await asyncio.wait_for(loop, 10)
        async with mcp_client(url_a, a.token, timeout=30) as c:  # expired: no tool, no call
            assert (await c.list_tools()).tools == []
            r = await c.call_tool("call_function", {"inputs": [1]})
            assert r.is_error and r.content[0].text.startswith("episode ended")


async def test_refusals_are_http_statuses() -> None:
    """The refusals, as plain HTTP (what any client sees before MCP starts)."""
    rv = Rendezvous()
    a, b = rv.open("epA", FAMILY), rv.open("epB", FAMILY)
    async with served(rv) as server:
        async with httpx2.AsyncClient() as http:

            async def status(ep: str, token: str | None) -> int:
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                headers |= {"Accept": "application/json, text/event-stream"}
                body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                r = await http.post(f"{server.base_url}/{ep}", json=body, headers=headers)
                return r.status_code

            assert await status("epA", None) == 401
            assert await status("epA", "wrong") == 401
            assert await status("epB", a.token) == 403
            assert await status("epA", b.token) == 403
            assert await status("epA", a.token) not in (401, 403)
            rv.close("epA", "completed")
            assert await status("epB", a.token) == 403  # an ended episode's token: still not B


async def test_a_client_that_reconnects_carries_on() -> None:
    rv, ch, agent = one_episode()
    async with served(rv) as server:
        loop = asyncio.create_task(fake_loop(agent))
        url = f"{server.base_url}/ep1"
        async with mcp_client(url, ch.token, timeout=30) as c:
            await c.call_tool("call_function", {"inputs": [1]})
        async with mcp_client(url, ch.token, timeout=30) as c:  # a new MCP session, same episode
            r = await c.call_tool("call_function", {"inputs": [2]})
            assert r.content[0].text == "echo {'inputs': [2]}"
            await c.call_tool(SUBMIT, {"description": "x"})
        conv = await asyncio.wait_for(loop, 10)
    calls = [c.arguments for m in conv for c in m.tool_calls]
    assert calls == [{"inputs": [1]}, {"inputs": [2]}, {"description": "x"}]


async def test_a_silent_client_ends_the_step_with_an_agent_error() -> None:
    rv = Rendezvous()
    agent = ExternalAgent(episode_id="ep1", rendezvous=rv, silence_s=0.2)
    with pytest.raises(AgentError) as e:
        await agent.step([Message(role="user", content="u")], tools=[])
    assert e.value.category == "agent" and "silent" in str(e.value)


async def test_a_call_waiting_when_the_episode_ends_is_answered() -> None:
    """A budget ends the episode after executing a call: the client gets that call's result
    from the final transcript; a call the episode never took gets "episode ended"."""
    rv, ch, agent = one_episode()
    first = asyncio.create_task(ch.call("call_function", {"inputs": [1]}))
    (call,) = (await agent.step([], tools=[])).tool_calls
    second = asyncio.create_task(ch.call("call_function", {"inputs": [2]}))
    await asyncio.sleep(0)
    done = [Message(role="tool", content="out 1", tool_call_id=call.id)]
    agent.episode_ended("budget_exhausted (rounds)", done)
    assert (await first).text == "out 1"
    assert (await second).is_error and "budget_exhausted" in (await second).text


async def test_replies_are_not_held_back_by_nagle() -> None:
    """Without TCP_NODELAY on the server's socket each reply waited ~40 ms (Nagle against the
    client's delayed ACK): every connection the server accepted has it (the round trip itself is
    timed by benchmarks/protocols.py)."""
    rv, ch, agent = one_episode()
    async with served(rv) as server:
        loop = asyncio.create_task(fake_loop(agent))
        async with mcp_client(f"{server.base_url}/ep1", ch.token, timeout=30) as c:
            await c.list_tools()
            for i in range(3):
                await c.call_tool("call_function", {"inputs": [i]})
            accepted = [
                conn.transport.get_extra_info("socket")
                for conn in server._server.server_state.connections
            ]
            assert accepted
            for sock in accepted:
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            await c.call_tool(SUBMIT, {"description": "x"})
        await asyncio.wait_for(loop, 10)
