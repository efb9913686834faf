"""The agent message cap at the MCP boundary (issue 38): one MCP call is one agent message, so its
arguments get the native cap (HARNESS_AGENT_MAX_MESSAGE_CHARS, counted as the agent host counts
it): a longer call is refused with a tool error the client reads, never reaches the episode, and
ends it with the native agent error; a request body longer than such a call can take is refused
with 413 before the SDK parses it. The official `mcp` SDK client on loopback against `McpApp`, as
in test_rendezvous.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx2
import pytest
from support.mcp_drive import mcp_client, served

from interp_harness.agents.base import AgentError, Message
from interp_harness.agents.host_protocol import reply_line_limit
from interp_harness.harness.domain.rendezvous import Rendezvous
from interp_harness.harness.mcp.agent import ExternalAgent

FAMILY = "numeric"
CAP = 1024  # the smallest cap the operator may set (Settings.agent_max_message_chars)


def arguments(chars: int) -> dict[str, list[str]]:
    """`call_function` arguments whose JSON (as the cap counts it) is `chars` characters."""
    pad = chars - len(json.dumps({"inputs": [""]}, ensure_ascii=False))
    args = {"inputs": ["é" * pad]}  # non-ASCII: characters, not bytes, are counted
    assert len(json.dumps(args, ensure_ascii=False)) == chars
    return args


async def test_a_call_over_the_cap_is_refused_and_ends_the_episode_as_an_agent_error() -> None:
    rv = Rendezvous()
    ch = rv.open("ep1", FAMILY)
    agent = ExternalAgent(episode_id="ep1", rendezvous=rv)
    conv = [Message(role="system", content="s"), Message(role="user", content="u")]
    async with (
        served(rv, max_message_chars=CAP) as server,
        mcp_client(f"{server.base_url}/ep1", ch.token, timeout=30) as c,
    ):
        step = asyncio.create_task(agent.step(list(conv), tools=[]))
        # at the cap: the episode takes it whole
        r_ok = asyncio.create_task(c.call_tool("call_function", arguments(CAP)))
        (call,) = (await asyncio.wait_for(step, 10)).tool_calls
        assert call.arguments == arguments(CAP)
        conv += [
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="echo", tool_call_id=call.id),
        ]
        step = asyncio.create_task(agent.step(list(conv), tools=[]))
        assert (await asyncio.wait_for(r_ok, 10)).content[0].text == "echo"  # type: ignore[union-attr]
        # one character over: refused, and the client reads why
        r = await c.call_tool("call_function", arguments(CAP + 1))
        text = r.content[0].text  # type: ignore[union-attr]
        assert r.is_error
        assert "1,025 characters" in text and "the limit is 1,024 characters" in text
        assert "HARNESS_AGENT_MAX_MESSAGE_CHARS" in text and "episode ends" in text
        # the episode's next step is the native agent error; nothing of the call reached it
        with pytest.raises(AgentError) as e:
            await asyncio.wait_for(step, 10)
        assert e.value.category == "agent"
        assert str(e.value).startswith("agent message is 1,025 characters")
        assert "é" not in str(e.value)
        agent.episode_ended(f"error (agent_error): {e.value}", conv)
        r = await c.call_tool("call_function", {"inputs": ["1"]})  # the token has expired
        assert r.is_error and r.content[0].text.startswith("episode ended")  # type: ignore[union-attr]


JSON_POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_a_body_longer_than_a_call_within_the_cap_is_refused_before_parsing() -> None:
    """By its Content-Length, and (chunked, no length) as it arrives."""
    rv = Rendezvous()
    ch = rv.open("ep1", FAMILY)
    limit = reply_line_limit(CAP)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "a" * limit}})

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 64 * 1024):
            yield body[i : i + 64 * 1024].encode()

    headers = {**JSON_POST, "Authorization": f"Bearer {ch.token}"}
    async with served(rv, max_message_chars=CAP) as server, httpx2.AsyncClient(timeout=30) as http:
        url = f"{server.base_url}/ep1"
        for content in (body.encode(), chunks()):
            r = await http.post(url, content=content, headers=headers)
            assert r.status_code == 413, r.text
            assert "HARNESS_AGENT_MAX_MESSAGE_CHARS" in r.json()["error"]
        assert ch._pending.empty() and not ch.connected  # nothing reached the episode
        small = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        r = await http.post(url, content=small, headers=headers)
        assert r.status_code not in (401, 403, 413), r.text
        assert ch.connected
