"""The openai and anthropic agents against real HTTP servers on loopback (stand-ins for the paid
APIs): request shape, usage and cost, retries on 429/5xx/timeouts, and errors with categories."""

from __future__ import annotations

import pytest

from interp_harness.agents import AgentError, Message, get_agent

CONV = [
    Message(role="system", content="SYS PROMPT"),
    Message(role="user", content="first question"),
    Message(role="assistant", content="an answer"),
    Message(role="user", content="second question"),
]
FAST = {"backoff_base": 0.01, "backoff_max": 0.05}


async def _step_error(agent) -> AgentError:
    """The AgentError a step on CONV raises (the agent is closed afterwards)."""
    with pytest.raises(AgentError) as err:
        await agent.step(CONV)
    await agent.aclose()
    return err.value


def _openai(server, **kw):
    return get_agent(
        "openai", base_url=server.url + "/v1", api_key="sk-test", model="m1", **{**FAST, **kw}
    )


async def test_openai_request_usage_and_cost(server) -> None:
    agent = _openai(server, temperature=0.3, prices={"prompt": 2.0, "completion": 10.0})
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content == "echo: second question"
    assert reply.model == "m1-served"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 7)
    assert reply.usage.cost_usd == pytest.approx((11 * 2.0 + 7 * 10.0) / 1e6)
    (req,) = server.script.requests
    assert req["headers"]["authorization"] == "Bearer sk-test"
    assert req["body"]["model"] == "m1"
    assert req["body"]["temperature"] == 0.3
    assert [m["role"] for m in req["body"]["messages"]] == ["system", "user", "assistant", "user"]
    assert req["body"]["messages"][0]["content"] == "SYS PROMPT"


async def test_openai_price_table_by_model(server) -> None:
    agent = _openai(
        server,
        prices={"m1": {"prompt": 1.0, "completion": 1.0}, "other": {"prompt": 9, "completion": 9}},
    )
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.usage.cost_usd == pytest.approx(18 / 1e6)


async def test_openai_options_from_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_TEMPERATURE", "0")
    agent = get_agent("openai", **FAST)
    await agent.step(CONV)
    await agent.aclose()
    (req,) = server.script.requests
    assert req["body"]["model"] == "env-model"
    assert req["body"]["temperature"] == 0
    assert req["headers"]["authorization"] == "Bearer sk-env"


async def test_openai_retries_429_and_5xx_then_succeeds(server) -> None:
    server.script.actions += [
        ("status", (429, {"error": {"message": "slow down", "type": "rate_limit"}})),
        ("status", (500, {"error": {"message": "boom"}})),
        ("status", (503, {"error": {"message": "busy"}})),
    ]
    agent = _openai(server)
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content == "echo: second question"
    assert len(server.script.requests) == 4


async def test_openai_retries_a_timeout(server) -> None:
    server.script.actions.append(("sleep", 1.5))
    agent = _openai(server, timeout=0.3)
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content == "echo: second question"
    assert len(server.script.requests) == 2


async def test_openai_persistent_5xx_is_an_infrastructure_error(server) -> None:
    server.script.default = ("status", (502, {"error": {"message": "bad gateway"}}))
    agent = _openai(server, max_retries=2)
    err = await _step_error(agent)
    assert err.category == "infrastructure"
    assert len(server.script.requests) == 3  # first attempt + 2 retries


async def test_openai_auth_error_is_not_retried(server) -> None:
    server.script.default = (
        "status",
        (401, {"error": {"message": "bad key", "type": "invalid_request_error"}}),
    )
    agent = _openai(server)
    err = await _step_error(agent)
    assert err.category == "agent"
    assert len(server.script.requests) == 1


async def test_openai_no_credit_is_a_budget_error(server) -> None:
    body = {
        "error": {
            "message": "You exceeded your current quota",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    server.script.default = ("status", (429, body))
    agent = _openai(server)
    err = await _step_error(agent)
    assert err.category == "budget"
    assert len(server.script.requests) == 1


def test_openai_without_key_or_url_says_how_to_configure(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AgentError, match="OPENAI_API_KEY"):
        get_agent("openai")


def _anthropic(server, **kw):
    return get_agent(
        "anthropic", base_url=server.url, api_key="ak-test", model="claude-x", **{**FAST, **kw}
    )


async def test_anthropic_separates_system_and_reports_usage(server) -> None:
    agent = _anthropic(server, max_tokens=321, prices={"prompt": 3.0, "completion": 15.0})
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content == "part one, echo: second question"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (23, 5)
    assert reply.usage.cost_usd == pytest.approx((23 * 3 + 5 * 15) / 1e6)
    (req,) = server.script.requests
    # the key travels as x-api-key or, in newer SDKs, as a bearer token
    assert "ak-test" in (
        req["headers"].get("x-api-key", ""),
        req["headers"].get("authorization", "").removeprefix("Bearer "),
    )
    assert "anthropic-version" in req["headers"]
    assert req["body"]["system"] == "SYS PROMPT"
    assert req["body"]["max_tokens"] == 321
    assert [m["role"] for m in req["body"]["messages"]] == ["user", "assistant", "user"]
    assert all(m["role"] != "system" for m in req["body"]["messages"])


async def test_anthropic_merges_consecutive_turns(server) -> None:
    conv = [Message(role="user", content="a"), Message(role="user", content="b")]
    agent = _anthropic(server)
    await agent.step(conv)
    await agent.aclose()
    (req,) = server.script.requests
    assert req["body"]["messages"] == [{"role": "user", "content": "a\n\nb"}]
    assert "system" not in req["body"]


async def test_anthropic_retries_overloaded_then_succeeds(server) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.script.actions += [
        ("status", (529, overloaded)),
        (
            "status",
            (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}),
        ),
    ]
    agent = _anthropic(server)
    reply = await agent.step(CONV)
    await agent.aclose()
    assert reply.content.endswith("echo: second question")
    assert len(server.script.requests) == 3


async def test_anthropic_auth_error_is_not_retried(server) -> None:
    server.script.default = (
        "status",
        (401, {"type": "error", "error": {"type": "authentication_error", "message": "bad"}}),
    )
    agent = _anthropic(server)
    err = await _step_error(agent)
    assert err.category == "agent"
    assert len(server.script.requests) == 1
