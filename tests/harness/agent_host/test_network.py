"""What a host can reach: a provider agent reaches its profile's endpoint (a real stand-in OpenAI
server on loopback) and nothing else; a local agent reaches nothing, including a listening
server on the orchestrator's loopback. (The forwarder's checks: tests/harness/api/test_extra_body.py.)"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from support.provider_stand_in import provider_server, server  # noqa: F401 - fixtures

from interp_harness.agents import AgentError, Message
from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHosts
from interp_harness.harness.providers.profiles import HELD_KEY

CONV = [Message(role="system", content="S"), Message(role="user", content="hello")]


@pytest.fixture
def listener():  # type: ignore[no-untyped-def]
    """A real TCP server on the orchestrator's loopback that counts its connections."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    seen: list[int] = []

    def accept() -> None:
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            seen.append(1)
            c.close()

    threading.Thread(target=accept, daemon=True).start()
    yield s.getsockname()[1], seen
    s.close()


@pytest.fixture
def profile(server, monkeypatch):  # type: ignore[no-untyped-def]  # noqa: F811
    monkeypatch.setenv(
        "HARNESS_PROVIDER_PROFILES",
        json.dumps(
            {
                "stand-in": {
                    "kind": "openai",
                    "base_url": server.url + "/v1",
                    "api_key_env": "TEST_PROFILE_KEY",
                }
            }
        ),
    )
    monkeypatch.setenv("TEST_PROFILE_KEY", "sk-profile-key")
    return "stand-in"


def client(hosts: AgentHosts, spec: str, **options: object):  # type: ignore[no-untyped-def]
    cls, _ = resolve_agent(spec)
    return hosts.client(cls, dict(options))


async def test_openai_agent_reaches_its_profile_endpoint_only(server, profile, listener) -> None:  # noqa: F811
    port, seen = listener
    hosts = AgentHosts()
    try:
        agent = client(hosts, "openai", profile=profile, model="m1", max_retries=0)
        reply = await agent.step(CONV)
        await agent.aclose()
        assert reply.content == "echo: hello" and reply.model == "m1-served"
        (req,) = server.script.requests
        assert req["headers"]["authorization"] == "Bearer sk-profile-key"  # the profile's key

        # the same agent pointed at another port as well: refused before any host starts (a
        # profile and a base_url together); the cheater below tries other ports from inside
        server.script.reset()
        with pytest.raises(AgentError, match="not both"):
            client(
                hosts, "openai", profile=profile, model="m1", max_retries=0, timeout=5,
                base_url=f"http://127.0.0.1:{port}/v1",
            )  # fmt: skip
        assert seen == [] and server.script.requests == []

        # a cheater under the openai provider: the profile's route, nothing else
        cheat = client(
            hosts,
            "host_test_agents:CheaterOpenAIAgent",
            profile=profile,
            connect=[["127.0.0.1", port], ["127.0.0.1", int(server.url.rsplit(":", 1)[1])]],
        )
        found = json.loads((await cheat.step(CONV)).content.split(": ", 1)[1])
        await cheat.aclose()
    finally:
        hosts.close()
    assert found["connect"] == [] and seen == []
    env = found["env"]
    assert env["OPENAI_API_KEY"] == HELD_KEY  # the profile's key went only to the endpoint
    assert "sk-profile-key" not in json.dumps(found)
    assert env["OPENAI_BASE_URL"].startswith("http://127.0.0.1:")  # the in-sandbox listener
    assert not {"TEST_PROFILE_KEY", "HARNESS_PROVIDER_PROFILES", "ANTHROPIC_API_KEY"} & set(env)


async def test_local_agent_reaches_nothing(listener, tmp_path: Path) -> None:
    port, seen = listener
    unix = tmp_path / "svc.sock"  # stands for a target service's socket on the host
    us = socket.socket(socket.AF_UNIX)
    us.bind(str(unix))
    us.listen(1)
    hosts = AgentHosts()
    try:
        cheat = client(
            hosts,
            "host_test_agents:CheaterAgent",
            connect=[["127.0.0.1", port], ["1.1.1.1", 80], ["example.com", 443], str(unix)],
        )
        found = json.loads((await cheat.step(CONV)).content.split(": ", 1)[1])
        await cheat.aclose()
    finally:
        hosts.close()
        us.close()
    assert found["connect"] == [] and seen == []
