"""`POST /runs` in protocol mode `tools` on the real server (`harness serve`): the openai and
anthropic agents, through an operator's provider profile, against a loopback stand-in model that
calls tools (tests/support/tool_model.py): parallel calls, a tool error and its correction,
submit_answer, and a leak audit of what was stored and sent. An agent that takes no tools is
refused when the run is created."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import httpx
import pytest
from support import wait_for
from support.tool_model import TARGET, ToolModel, audit, check_session

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

KEY = "sk-stand-in-profile-key-7e21"


@pytest.fixture
def model() -> Iterator[ToolModel]:
    m = ToolModel()
    yield m
    m.close()


@pytest.fixture
def srv(start_server, model: ToolModel):  # type: ignore[no-untyped-def]
    profiles = {
        "gpt": {"kind": "openai", "base_url": model.url + "/v1", "api_key_env": "STAND_IN_KEY"},
        "claude": {"kind": "anthropic", "base_url": model.url, "api_key_env": "STAND_IN_KEY"},
    }
    return start_server({"STAND_IN_KEY": KEY, "HARNESS_PROVIDER_PROFILES": json.dumps(profiles)})


def body(agent: str, options: dict[str, object]) -> dict[str, object]:
    return {
        "agent": agent,
        "agent_options": options,
        "dataset": "find-v1",
        "ids": [TARGET],
        "floor": False,
        "protocol": {"mode": "tools"},
    }


@pytest.mark.parametrize(
    ("agent", "options"),
    [
        ("openai", {"profile": "gpt", "model": "m1"}),
        ("anthropic", {"profile": "claude", "model": "claude-x", "tool_choice": "auto"}),
    ],
)
@pytest.mark.slow
def test_post_runs_in_tools_mode(srv, model: ToolModel, agent: str, options: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    r = srv.post_run(body(agent, options))
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    assert r.json()["spec"]["protocol"]["mode"] == "tools"
    wait_for(
        lambda: httpx.get(f"{srv.url}/runs/{run_id}").json()["status"] in ("completed", "failed"),
        120,
    )
    store = Store(make_engine(f"sqlite:///{srv.home / 'harness.db'}"))
    (ep,) = store.episodes.of_run(run_id)
    check_session(store, ep)
    audit(store, ep, model)
    posts = [q for q in model.requests if q["path"].endswith(("/chat/completions", "/messages"))]
    assert len(posts) == 3
    # the profile's key, added by the orchestrator's forwarder (the agent host never holds it)
    for q in posts:
        sent = q["headers"].get("x-api-key") or q["headers"].get("authorization", "")
        assert sent.removeprefix("Bearer ") == KEY
    assert KEY not in srv.log()


def test_an_agent_without_tools_is_refused(srv, model: ToolModel) -> None:  # type: ignore[no-untyped-def]
    r = srv.post_run(body("replay", {"messages": ["[DESCRIPTION]: x"]}))
    assert r.status_code == 400, r.text
    assert "agent 'replay' does not support protocol mode 'tools'" in r.json()["detail"]
    assert httpx.get(srv.url + "/runs").json() == []
    assert model.requests == []
