"""An external agent's client for one episode of `harness mcp serve` (docs/agents.md, "External
agents over MCP"): the official `mcp` Python SDK over Streamable HTTP.

    harness mcp serve -d find-v1 -f numeric -n 1 --seed 0   # prints the episode's URL and token
    python docs/examples/mcp_client.py URL TOKEN

It reads the episode's instructions, lists its tools, evaluates the hidden function at three
inputs and submits an answer; an agent would choose the calls and the answer, through the same
SDK calls. Exit status 0 when the answer was taken. The test suite runs this file against a real
`harness mcp serve` (tests/harness/mcp/test_mcp_client_example.py).
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ANSWER = {
    "description": "a placeholder: an agent describes what the calls showed",
    "domain": "all real numbers",
    "code": "def f(x):\n    return 0.0\n",
}


async def run(url: str, token: str) -> bool:
    """One episode, start to answer; True when the answer was taken."""
    auth = {"Authorization": f"Bearer {token}"}
    # no read timeout: a call waits until the episode has executed it
    async with httpx2.AsyncClient(headers=auth, timeout=None) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            task = await c.get_prompt("task")  # the system prompt and the first user message
            for m in task.messages:
                print(f"[{m.role}] {m.content.text}")
            tools = (await c.list_tools()).tools  # the benchmark's commands
            for t in tools:
                print(f"tool {t.name}: {json.dumps(t.input_schema)}")  # its JSON schema
            r = await c.call_tool("call_function", {"inputs": ["-2", "0", "2"]})  # inputs as text
            print(f"is_error={r.is_error}: {r.content[0].text}")  # the text protocol's reply
            r = await c.call_tool("submit_answer", ANSWER)
            print(f"is_error={r.is_error}: {r.content[0].text}")
            return not r.is_error


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python mcp_client.py URL TOKEN")
    sys.exit(0 if asyncio.run(run(sys.argv[1], sys.argv[2])) else 1)
