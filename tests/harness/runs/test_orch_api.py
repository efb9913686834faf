"""End to end through the REST API: a real uvicorn server (subprocess) on loopback, on SQLite and
on a real PostgreSQL server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from support import wait_for
from support.orch_helpers import Server, server_env

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
F = [f"orch-test/numeric/f{i:05d}" for i in range(3)]
AFFINE = [(2.0, 1.0), (-3.0, 0.5), (0.5, -4.0)]  # orch_plugin's first three targets


@pytest.fixture(scope="module")
def shared(tmp_path_factory):  # type: ignore[no-untyped-def]
    """One SQLite-backed server for the tests that need no database of their own (starting a
    server costs seconds on a loaded machine)."""
    d = tmp_path_factory.mktemp("api")
    env = server_env(f"sqlite:///{d / 'harness.db'}", HARNESS_API_TOKENS=f"other,{TOKEN}")
    srv = Server(env, d / "server.log").start()
    yield srv
    srv.stop()


def _sse(text: str) -> list[dict]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if not line.startswith(":")
        )
        events.append({"event": fields.get("event"), "data": json.loads(fields["data"])})
    return events


def newest_migration() -> str:
    """The revision of the newest file in the migrations folder (named NNNN_what.py)."""
    import interp_harness.harness.store.migrations.versions as versions

    return max(p.name[:4] for p in Path(versions.__path__[0]).glob("[0-9][0-9][0-9][0-9]_*.py"))


@pytest.mark.slow
def test_run_through_the_api(db_url: str, start_server, request) -> None:  # type: ignore[no-untyped-def]
    if db_url.startswith("sqlite"):
        srv = request.getfixturevalue("shared")
    else:
        srv = start_server(db_url, HARNESS_API_TOKENS=f"other,{TOKEN}")
    c = httpx.Client(base_url=srv.url, timeout=30)
    health = c.get("/healthz").json()
    assert health["status"] == "ok" and health["schema_revision"] == newest_migration()
    assert health["database"] == ("sqlite" if db_url.startswith("sqlite") else "postgresql")

    body = {
        "agent": "orch_agents:ProbeAgent",
        "agent_options": {"n_calls": 2},
        "dataset": "orch-test",
        "family": "numeric",
        "limit": 3,
    }
    assert c.post("/runs", json=body).status_code == 401
    assert c.post("/runs", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
    # the module's server is shared: other tests' runs (in any order) are not this one's
    before = {x["id"] for x in c.get("/runs").json()}
    r = c.post("/runs", json=body, headers=AUTH)
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["status"] == "queued" and run["n_targets"] == 3

    # live progress until the run ends (the stream closes by itself)
    events = _sse(c.get(f"/runs/{run['id']}/events").text)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run_status" and kinds[-1] == "end"
    assert kinds.count("episode_started") == 3 and kinds.count("episode_finished") == 3
    assert kinds.count("step") == 3 * 2  # one per answered command
    assert events[-1]["data"] == {"status": "completed"}
    assert [e["data"]["data"]["status"] for e in events if e["event"] == "run_status"] == [
        "queued",
        "running",
        "completed",
    ]

    detail = c.get(f"/runs/{run['id']}").json()
    assert detail["status"] == "completed"
    assert detail["progress"] == {"total": 3, "done": 3, "by_status": {"completed": 3}}
    assert detail["usage"]["target_calls"] == 6 and detail["usage"]["rounds"] == 9
    assert detail["usage"]["prompt_tokens"] == 90 and detail["usage"]["completion_tokens"] == 45
    metrics = {m["metric"]: m for m in detail["metrics"]}
    assert metrics["answered"] == {"metric": "answered", "n": 3, "n_errors": 0, "mean": 1.0}

    eps = c.get(f"/runs/{run['id']}/episodes").json()
    assert [e["target_id"] for e in eps] == F
    for e, (a, b) in zip(eps, AFFINE, strict=True):
        full = c.get(f"/episodes/{e['id']}").json()
        assert [m["role"] for m in full["messages"]] == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        assert [(x["step"], x["inputs"]) for x in full["calls"]] == [(2, ["0"]), (4, ["1"])]
        [out] = full["calls"][1]["outputs"]
        assert (out["input"], out["output"], out["error"]) == ("1", str(a + b), None)
        assert full["messages"][5]["content"] == (
            f"Response: Function input - output pairs: (1, {a + b}) \n"
        )
        assert {s["metric"]: s["value"] for s in full["scores"]} == {"answered": 1.0, "calls": 2.0}

    assert c.post(f"/runs/{run['id']}/cancel", headers=AUTH).status_code == 409
    listed = [x for x in c.get("/runs").json() if x["id"] not in before]
    # newest first: the run's interpolation floor (stored right after it, marked by floor_for)
    assert [x["floor_for"] for x in listed] == [run["id"], None]
    assert listed[1]["id"] == run["id"] and listed[0]["agent"] == "interpolation"
    assert detail["floor_run_id"] == listed[0]["id"]
    stored = c.get(f"/runs/{run['id']}/events", params={"stream": "false", "after": 0}).json()
    assert len(stored) == len(events) - 1  # everything but the closing "end"


def test_bad_input_says_what_is_wrong(shared) -> None:  # type: ignore[no-untyped-def]
    c = httpx.Client(base_url=shared.url, timeout=30, headers=AUTH)
    n_runs = len(c.get("/runs").json())
    ok = {"agent": "orch_agents:ProbeAgent", "dataset": "orch-test", "family": "numeric"}

    r = c.post("/runs", json=ok | {"agent": "no-such-agent"})
    assert r.status_code == 400 and "unknown agent 'no-such-agent'" in r.json()["detail"]
    r = c.post("/runs", json=ok | {"dataset": "nope"})
    assert r.status_code == 400 and "unknown dataset 'nope'" in r.json()["detail"]
    r = c.post("/runs", json=ok | {"family": "relations"})
    assert r.status_code == 400 and "empty selection" in r.json()["detail"]
    r = c.post("/runs", json=ok | {"ids": ["orch-test/numeric/f99999"]})
    assert r.status_code == 400 and "f99999" in r.json()["detail"]
    r = c.post("/runs", json=ok | {"budgets": {"max_rounds": 0}})
    assert r.status_code == 422
    [err] = r.json()["detail"]
    assert (
        err["loc"] == ["body", "budgets", "max_rounds"]
        and "greater than or equal to 1" in err["msg"]
    )
    r = c.post("/runs", json=ok | {"protocol": {"mode": "bash"}})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "protocol", "mode"]
    assert c.get("/runs/nope").status_code == 404
    assert c.get("/episodes/nope").status_code == 404
    assert c.get("/targets", params={"dataset": "nope"}).status_code == 400
    assert len(c.get("/runs").json()) == n_runs  # nothing was stored


def test_targets_and_agents_never_show_ground_truth(shared) -> None:  # type: ignore[no-untyped-def]
    from interp_harness.function_store.models import make_canary

    c = httpx.Client(base_url=shared.url, timeout=60)
    r = c.get("/targets", params={"dataset": "orch-test", "family": "numeric"})
    assert r.status_code == 200
    assert [t["id"] for t in r.json()] == [f"orch-test/numeric/f{i:05d}" for i in range(6)]
    assert "hidden" not in r.text and "orchtest-affine" not in r.text
    assert make_canary("orch-test/numeric/f00000") not in r.text
    names = {a["name"] for a in c.get("/agents").json()}
    assert {"openai", "anthropic", "scripted-numeric"} <= names


def test_openapi_declares_every_route(shared) -> None:  # type: ignore[no-untyped-def]
    doc = httpx.get(shared.url + "/openapi.json").json()
    routes = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert routes == {
        ("POST", "/runs"),
        ("GET", "/runs"),
        ("GET", "/runs/{run_id}"),
        ("GET", "/runs/{run_id}/episodes"),
        ("GET", "/episodes/{episode_id}"),
        ("GET", "/episodes/{episode_id}/messages/{step}/content"),
        ("GET", "/episodes/{episode_id}/final_answer"),
        ("GET", "/episodes/{episode_id}/figures/{figure_id}.png"),
        ("GET", "/runs/{run_id}/events"),
        ("POST", "/runs/{run_id}/cancel"),
        ("GET", "/runs/{run_id}/report"),
        ("GET", "/targets"),
        ("GET", "/agents"),
        ("GET", "/healthz"),
    }
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            ok = op["responses"].get("200") or op["responses"].get("201")
            # JSON, or (a long agent text, streamed) plain text, or a lab figure's PNG
            kind = (
                "image/png"
                if path.endswith(".png")
                else "text/plain"
                if path.startswith("/episodes/{episode_id}/")
                else "application/json"
            )
            assert kind in ok["content"], (method, path)
            assert ok["content"][kind]["schema"], (method, path)


def test_report_route(shared) -> None:  # type: ignore[no-untyped-def]
    """GET /runs/{id}/report hands the evaluator EpisodeSummary objects, or says it is missing."""
    import importlib.util

    c = httpx.Client(base_url=shared.url, timeout=30, headers=AUTH)
    run = c.post(
        "/runs",
        json={
            "agent": "orch_agents:ProbeAgent",
            "dataset": "orch-test",
            "ids": ["orch-test/numeric/f00000"],
        },
    ).json()
    wait_for(lambda: c.get(f"/runs/{run['id']}").json()["status"] == "completed")
    r = c.get(f"/runs/{run['id']}/report")
    if importlib.util.find_spec("interp_harness.evaluator.report") is None:
        assert r.status_code == 501 and "report module is not available" in r.json()["detail"]
    else:
        assert r.status_code == 200, r.text
        assert r.json()["run_id"] == run["id"]
