"""An external agent on a neuron target, through the REST API (`POST /runs` with agent
`external`; the MCP server mounted at `/mcp` of `harness serve`'s app): the target service runs
in bubblewrap and reaches SmolLM2's intervention service (started here) through its one forwarded
endpoint. The `mcp` SDK client runs the scripted neuron baseline's strategy; the run scores what
the same baseline scores natively (protocol mode `tools`, in its agent host), with the same
target calls, the same tool results and the same answer. Endpoints and tokens go to the run's owner only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.mcp_drive import drive
from support.neuron_runs import neuron_api_env, wait_done
from support.orch_helpers import Server

from interp_harness.agents.registry import get_agent

OWNER, OTHER = "owner-token-0123456789", "other-token-0123456789"
RUN = {"dataset": "neuron", "family": "neurons", "variant": "smollm2", "limit": 1, "seed": 1}


@pytest.fixture(scope="module")
def api(smol_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("mcp-neurons")
    env = neuron_api_env(d, smol_url, HARNESS_API_TOKENS=f"{OWNER},{OTHER}")
    srv = Server(env, d / "api.log").start(timeout=120)
    yield srv
    srv.stop()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def episode(c: httpx.Client, run_id: str) -> dict[str, Any]:
    [e] = c.get(f"/runs/{run_id}/episodes").json()
    full = c.get(f"/episodes/{e['id']}", headers=auth(OWNER)).json()
    return {
        "target": e["target_id"],
        "status": full["status"],
        "replies": [m["content"] for m in full["messages"] if m["role"] in ("user", "tool")][1:],
        "calls": [x["inputs"] for x in full["calls"]],
        "answer": full["final_answer"],
        "scores": sorted((s["metric"], s["status"], s["value"]) for s in full["scores"]),
    }


@pytest.mark.slow
def test_neuron_target_over_mcp_through_the_rest_api(api: Server) -> None:
    c = httpx.Client(base_url=api.url, timeout=120)
    r = c.post(
        "/runs",
        json={"agent": "external", "protocol": {"mode": "tools"}, **RUN},
        headers=auth(OWNER),
    )
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    [ep] = r.json()["mcp_endpoints"]
    assert ep["url"] == f"{api.url}/mcp/{ep['episode_id']}"
    # only the owner sees them again
    assert c.get(f"/runs/{run_id}").json()["mcp_endpoints"] is None
    assert c.get(f"/runs/{run_id}", headers=auth(OTHER)).json()["mcp_endpoints"] is None
    assert c.get(f"/runs/{run_id}", headers=auth(OWNER)).json()["mcp_endpoints"] == [ep]
    # an API token is not an episode token
    assert httpx.post(ep["url"], json={}, headers=auth(OWNER)).status_code == 401

    seen = asyncio.run(drive(ep["url"], ep["token"], get_agent("scripted-neuron"), "neurons"))
    assert seen[-1]["text"] == "answer submitted; the episode has ended"
    assert wait_done(c, run_id)["status"] == "completed"
    assert c.get(f"/runs/{run_id}", headers=auth(OWNER)).json()["mcp_endpoints"] == []
    over_mcp = episode(c, run_id)

    native_run = {"agent": "scripted-neuron", "protocol": {"mode": "tools"}, **RUN}
    r = c.post("/runs", json=native_run, headers=auth(OWNER))
    assert r.status_code == 201, r.text
    assert r.json()["mcp_endpoints"] is None
    assert wait_done(c, r.json()["id"])["status"] == "completed"
    native = episode(c, r.json()["id"])

    assert over_mcp["status"] == "completed" and len(over_mcp["calls"]) == 3
    assert any(status == "ok" for _, status, _ in over_mcp["scores"]), over_mcp["scores"]
    assert over_mcp == native
