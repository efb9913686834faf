"""The leak audit's agent side: an agent host, next to the real sandboxed target services of the
audit, can neither reach those services (their sockets) nor find a target in its own memory,
and its reply carries no canary. (The protocol side is test_leak_audit.py.)"""

from __future__ import annotations

import json

from interp_harness.agents import Message
from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHosts


async def test_agent_host_reaches_no_target_service(leak_pool, leak_catalog) -> None:  # type: ignore[no-untyped-def]
    sockets = [h.meta["socket"] for h in leak_pool.handles() if "socket" in h.meta]
    tcp = [
        ["127.0.0.1", int(h.url.rsplit(":", 1)[1])]
        for h in leak_pool.handles()
        if h.url.startswith("http://")
    ]
    assert sockets or tcp
    cls, _ = resolve_agent("host_test_agents:CheaterAgent")
    hosts = AgentHosts()
    agent = hosts.client(cls, {"connect": [*sockets, *tcp], "probe_paths": sockets})
    try:
        reply = await agent.step(
            [Message(role="system", content="S"), Message(role="user", content="U")]
        )
    finally:
        await agent.aclose()
        hosts.close()
    found = json.loads(reply.content.split(": ", 1)[1])
    assert found["connect"] == [] and found["paths"] == [] and found["objects"] == []
    for tid in ("find-v1/numeric/f00473", "find-v1/numeric/f00000"):
        assert leak_catalog.get(tid).hidden.canary not in reply.content
