"""Oversized MCP tool calls (issue 38 item 4): an external agent's call with 900 KiB of arguments
was stored whole and `GET /episodes/{id}` then served megabytes. Now one MCP call is one agent
message under the native cap (HARNESS_AGENT_MAX_MESSAGE_CHARS, 256 Ki characters): the client
reads a tool error saying so, the episode ends as that agent error, nothing of the call is stored;
a body over the server's limit is refused with 413 before MCP parses it. Over `/mcp` of the
suite's server (the official `mcp` SDK client), and over `harness mcp serve` next to it. On the
way (item 5), the run says what it waits for until its client comes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support import HARNESS_CLI
from support.battery import EP_TERMINAL, RUN_TIMEOUT_S, TARGET, AdvServer, cli_env
from support.canary import Canaries, assert_clean

ARGS_CHARS = 900 * 1024  # under the API's 1 MB body limit, far over the message cap
HUGE_BYTES = 3 * 1024 * 1024  # over every body limit
MAX_EPISODE_PAGE = 64 * 1024  # what the episode's page may weigh after the refused call
EXTERNAL = {"agent": "external", "protocol": {"mode": "tools"}, "dataset": "find-v1"}
SPEC = {**EXTERNAL, "ids": [TARGET], "floor": False}
ARGUMENTS = {"inputs": ["a" * ARGS_CHARS]}
SIZE = len(json.dumps(ARGUMENTS, ensure_ascii=False))  # as the cap counts it


async def _call(url: str, token: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with Client(streamable_http_client(url, http_client=http)) as c:
        r = await c.call_tool("call_function", arguments)
    return bool(r.is_error), r.content[0].text  # type: ignore[union-attr]


def _huge_body(url: str, token: str) -> httpx.Response:
    """A `tools/call` of 3 MiB, as plain HTTP."""
    call = {"name": "call_function", "arguments": {"inputs": ["a" * HUGE_BYTES]}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    return httpx.post(url, content=body, headers=headers, timeout=120)


def _refused_then_ended(url: str, token: str) -> None:
    assert _huge_body(url, token).status_code == 413
    error, text = asyncio.run(_call(url, token, ARGUMENTS))
    assert error and "HARNESS_AGENT_MAX_MESSAGE_CHARS" in text, text[:500]
    assert len(text) < 1000


def _check_episode(d: dict[str, Any]) -> None:
    assert (d["status"], d["end_reason"], d["error_category"]) == ("error", "agent_error", "agent")
    assert d["error"].startswith(f"agent message is {SIZE:,} characters"), d["error"]
    assert not any(m["role"] == "assistant" for m in d["messages"])  # the call was not stored


def test_an_oversized_call_over_the_apis_mcp_is_refused_and_not_stored(
    adv_server: AdvServer, canaries: Canaries
) -> None:
    run = adv_server.post_spec(SPEC)
    [ep] = run["mcp_endpoints"]
    # issue 38 item 5: until its client comes, the run says what it waits for (holding no slot)
    waits = f"waiting for an MCP client to connect to episode 0 ({ep['episode_id']})"
    assert adv_server.api.get(f"/runs/{run['id']}").json()["waiting"] == [waits]
    assert waits in adv_server.api.get(f"/ui/runs/{run['id']}").text
    _refused_then_ended(ep["url"], ep["token"])
    d = adv_server.wait_episode(run["id"], lambda d: d["status"] in EP_TERMINAL, RUN_TIMEOUT_S)
    _check_episode(d)
    for headers in ({}, adv_server.auth):  # the page anyone may read stays small
        page = adv_server.api.get(f"/episodes/{ep['episode_id']}", headers=headers)
        assert page.status_code == 200 and len(page.content) < MAX_EPISODE_PAGE, len(page.content)
        assert_clean(canaries, f"GET /episodes/{ep['episode_id']} (oversized MCP call)", page.text)


def test_an_oversized_call_over_harness_mcp_serve_is_refused_and_not_stored(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path
) -> None:
    """The CLI's own MCP server (no API body limit in front of it: its own, from the cap)."""
    endpoints = tmp_path / "endpoints.json"
    argv = ["mcp", "serve", "-d", "find-v1", "--id", TARGET, "--no-floor", "--json"]
    proc = subprocess.Popen(
        [*HARNESS_CLI, *argv, "--mcp-endpoints", str(endpoints)],
        env={**os.environ, **cli_env(adv_server)},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not (endpoints.exists() and endpoints.stat().st_size):
            assert proc.poll() is None and time.monotonic() < deadline, "no endpoints"
            time.sleep(0.2)
        [ep] = json.loads(endpoints.read_text())
        _refused_then_ended(ep["url"], ep["token"])
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)  # the run ends: its one episode did
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err[-2000:]  # a run whose every episode ended in error failed
    assert len(out) < MAX_EPISODE_PAGE
    assert_clean(canaries, "harness mcp serve (oversized MCP call)", out + err)
    _check_episode(adv_server.api.get(f"/episodes/{ep['episode_id']}").json())
