"""Issue 27, item 9: `agent_options.extra_body` cannot override what the operator's provider
profile governs (the model, n, token limits, streaming, tools): POST /runs refuses such a key with
a 400 naming it. Behind that, the orchestrator's forwarder checks every request an agent sends
to its profile's endpoint (defence in depth: agent code can write any request itself).

Real server / real bwrap agent hosts; a loopback OpenAI-compatible endpoint records what it got."""

from __future__ import annotations

import gzip
import json
import shutil

import httpx
import pytest
from support import wait_for
from support.openai_stub import OpenAIStub

from interp_harness.agents import Message
from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHosts

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="agent hosts need bubblewrap (Debian `bubblewrap`)"
)
SERVER_KEY = "sk-server-env-key-e9"
PROFILE_KEY = "sk-cheap-profile-key-41"
TARGET = "find-v1/numeric/f00150"
CONV = [Message(role="system", content="S"), Message(role="user", content="U")]


@pytest.fixture
def stub():  # type: ignore[no-untyped-def]
    s = OpenAIStub(reply="[DESCRIPTION]: done")
    yield s
    s.close()


def _profiles(stub: OpenAIStub) -> str:
    cheap = {
        "kind": "openai",
        "base_url": stub.url + "/v1",
        "api_key_env": "CHEAP_KEY",
        "models": ["cheap-model"],
        "max_tokens": 1000,
    }
    return json.dumps({"cheap": cheap})


def _body(**options: object) -> dict:
    return {
        "agent": "openai",
        "agent_options": {"profile": "cheap", "model": "cheap-model", **options},
        "dataset": "find-v1",
        "ids": [TARGET],
        "floor": False,
        "budgets": {"max_rounds": 2},
    }


@pytest.mark.slow
def test_post_runs_refuses_profile_governed_extra_body_keys(start_server, stub) -> None:  # type: ignore[no-untyped-def]
    srv = start_server(
        {
            "OPENAI_API_KEY": SERVER_KEY,
            "CHEAP_KEY": PROFILE_KEY,
            "HARNESS_PROVIDER_PROFILES": _profiles(stub),
        }
    )
    # the request of the issue: all three at once; the first governed key is named
    r = srv.post_run(_body(extra_body={"model": "gpt-4-expensive", "n": 64, "max_tokens": 999999}))
    assert r.status_code == 400, r.text
    assert "agent_options.extra_body.model is refused" in r.json()["detail"]
    for key, value in [
        ("n", 64),
        ("max_tokens", 999999),
        ("max_completion_tokens", 999999),
        ("model", "gpt-4-expensive"),
        ("messages", []),
        ("stream", True),
        ("tools", []),
        ("best_of", 8),
    ]:
        r = srv.post_run(_body(extra_body={"top_p": 0.5, key: value}))
        assert r.status_code == 400, (key, r.text)
        assert f"agent_options.extra_body.{key} is refused" in r.json()["detail"], r.text
    # the run's own max_tokens is held to the profile's limit too
    r = srv.post_run(_body(max_tokens=999999))
    assert r.status_code == 400 and "over provider profile 'cheap'" in r.json()["detail"], r.text
    assert httpx.get(srv.url + "/runs").json() == []  # nothing stored
    assert stub.posts() == []  # nothing reached the endpoint

    # what the profile does not govern still passes through (e.g. vLLM sampling options)
    r = srv.post_run(_body(extra_body={"top_p": 0.5, "seed": 7}, max_tokens=500))
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    wait_for(lambda: httpx.get(f"{srv.url}/runs/{run_id}").json()["status"] == "completed", 120)
    [sent] = stub.posts()
    assert (sent["model"], sent["max_tokens"], sent["top_p"], sent["seed"]) == (
        "cheap-model", 500, 0.5, 7
    )  # fmt: skip
    assert "n" not in sent


@pytest.mark.slow
async def test_the_forwarder_enforces_the_profile_on_every_request(stub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The agent writes its own requests (agent code is untrusted): the forwarder refuses every
    one the profile does not allow, with a 400 naming the key, and they never reach the
    endpoint; an allowed one goes through with the profile's key."""
    monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", _profiles(stub))
    monkeypatch.setenv("CHEAP_KEY", PROFILE_KEY)
    msgs = [{"role": "user", "content": "hi"}]
    ok = {"model": "cheap-model", "max_tokens": 10, "messages": msgs}
    cases = [
        ({"body": {"model": "gpt-4-expensive", "n": 64, "max_tokens": 999999, "messages": msgs}},
         "not 'gpt-4-expensive'"),
        ({"body": {**ok, "n": 64}}, "n=64 is over provider profile 'cheap'"),
        ({"body": {**ok, "best_of": 64}}, "best_of=64"),
        ({"body": {**ok, "max_tokens": 999999}}, "max_tokens=999999 is over"),
        ({"body": {**ok, "max_completion_tokens": 999999}}, "max_completion_tokens=999999"),
        ({"body": {**ok, "n": "64"}}, "n='64'"),
        ({"body": [ok]}, "not a JSON object"),
        ({"raw": "model=gpt-4-expensive"}, "not JSON"),
        ({"body": ok, "path": "/../v2/chat/completions"}, "outside the provider profile's URL"),
        ({"raw": gzip.compress(json.dumps({**ok, "model": "gpt-4-expensive"}).encode()).decode("latin-1"),
          "headers": {"content-encoding": "gzip"}}, "content-encoding 'gzip'"),
    ]  # fmt: skip
    cls, _ = resolve_agent("boundary_agents:RogueRequestAgent")
    hosts = AgentHosts()
    got = []
    try:
        for options, says in [*cases, ({"body": ok}, None)]:
            agent = hosts.client(cls, {"profile": "cheap", **options})
            try:
                got.append((json.loads((await agent.step(list(CONV))).content), says))
            finally:
                await agent.aclose()
    finally:
        hosts.close()
    for answer, says in got[:-1]:
        assert answer["status"] == 400 and says in answer["body"], (says, answer)
        assert "refused by the harness" in answer["body"]
    assert got[-1][0]["status"] == 200, got[-1]
    assert stub.posts() == [ok]  # only the allowed request reached the endpoint
    assert [r["authorization"] for r in stub.requests] == [f"Bearer {PROFILE_KEY}"]
