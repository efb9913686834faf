"""An agent's failure category is a claim: agent code can raise AgentError with any category, and
"infrastructure" / "budget" (a provider failure, left out of the means as not the agent's fault)
stand only when the orchestrator's forwarder saw the provider fail during that step."""

from __future__ import annotations

import json

import pytest
from support.provider_stand_in import provider_server, server  # noqa: F401 - fixtures

from interp_harness.agents import AgentError, Message
from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHosts

CONV = [Message(role="system", content="S"), Message(role="user", content="hello")]


async def _fail(spec: str, **options: object) -> AgentError:
    hosts = AgentHosts()
    cls, _ = resolve_agent(spec)
    agent = hosts.client(cls, dict(options))
    try:
        with pytest.raises(AgentError) as info:
            await agent.step(CONV)
        await agent.aclose()
    finally:
        hosts.close()
    return info.value


@pytest.mark.parametrize("claimed", ["infrastructure", "budget", "target", "judge"])
async def test_a_claimed_provider_failure_without_one_is_the_agents(claimed: str) -> None:
    err = await _fail("host_test_agents:ClaimsCategoryAgent", category=claimed)
    assert err.category == "agent"
    assert f"reported as {claimed!r}" in str(err) and "no provider failure seen" in str(err)


async def test_an_agent_error_stays_an_agent_error() -> None:
    err = await _fail("host_test_agents:ClaimsCategoryAgent", category="agent")
    assert err.category == "agent" and "reported as" not in str(err)


@pytest.fixture
def profile(server, monkeypatch):  # type: ignore[no-untyped-def]  # noqa: F811
    monkeypatch.setenv(
        "HARNESS_PROVIDER_PROFILES",
        json.dumps({"stand-in": {"kind": "openai", "base_url": server.url + "/v1"}}),
    )
    return "stand-in"


async def test_a_provider_failure_the_forwarder_saw_stays_infrastructure(server, profile) -> None:  # noqa: F811
    server.script.default = ("status", (503, {"error": {"message": "overloaded"}}))
    err = await _fail("openai", profile=profile, model="m1", max_retries=0, timeout=10)
    assert err.category == "infrastructure", str(err)
    assert server.script.requests  # the call really reached the endpoint
