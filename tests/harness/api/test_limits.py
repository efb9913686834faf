"""Issue 22, bounded resources and odd input on the real server: body size (413), option sizes
(422), a trimmed and paginated GET /runs, capped event streams (429), and agent text with lone
surrogates (U+FFFD, the episode goes on)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
from support import wait_for

RUN = {"agent": "scripted-numeric", "dataset": "find-gen", "family": "numeric", "floor": False}


@pytest.fixture(scope="module")
def default_server(start_module_server):  # type: ignore[no-untyped-def]
    """One server with the default settings for the module's tests that need no other."""
    return start_module_server()


def run_ids(srv) -> list[str]:  # type: ignore[no-untyped-def]
    return [x["id"] for x in httpx.get(srv.url + "/runs", params={"limit": 1000}).json()]


def test_body_size_limit_is_413(start_server) -> None:  # type: ignore[no-untyped-def]
    srv = start_server({"HARNESS_API_MAX_BODY_BYTES": "50000"})
    big = {**RUN, "limit": 1, "agent_options": {"pad": "x" * 60_000}}
    r = httpx.post(srv.url + "/runs", json=big, timeout=30)
    assert r.status_code == 413 and "larger than 50000 bytes" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield json.dumps(big).encode()

    r = httpx.post(srv.url + "/runs", content=chunks(), timeout=30)
    assert r.status_code == 413, r.text
    assert httpx.get(srv.url + "/runs").json() == []
    assert httpx.get(srv.url + "/healthz").status_code == 200


def test_default_body_limit_and_option_size(default_server) -> None:  # type: ignore[no-untyped-def]
    srv = default_server
    r = httpx.post(srv.url + "/runs", json={**RUN, "ids": ["x" * 100] * 12_000}, timeout=30)
    assert r.status_code == 413  # 1.2 MB > the 1 MB default
    r = httpx.post(srv.url + "/runs", json={**RUN, "agent_options": {"p": "x" * 70_000}})
    assert r.status_code == 422 and "at most 64000" in r.text
    r = httpx.post(srv.url + "/runs", json={**RUN, "ids": ["x" * 201]})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:3] == ["body", "ids", 0]


def test_run_list_is_paginated_and_trimmed(default_server) -> None:  # type: ignore[no-untyped-def]
    srv = default_server
    assert run_ids(srv) == []  # the other tests on this server store no run
    ids = [srv.post_run({**RUN, "limit": 2, "seed": i}).json()["id"] for i in range(3)]
    page = httpx.get(srv.url + "/runs", params={"limit": 2}).json()
    rest = httpx.get(srv.url + "/runs", params={"limit": 2, "offset": 2}).json()
    assert [x["id"] for x in page + rest] == ids[::-1]  # newest first
    assert set(page[0]) == {
        "id", "status", "agent", "dataset", "family", "variant", "n_targets", "floor_for",
        "created_at", "updated_at", "finished_at", "error", "error_cause", "imported",
    }  # fmt: skip
    assert page[0]["n_targets"] == 2 and page[0]["imported"] is False
    assert httpx.get(srv.url + "/runs", params={"limit": 1001}).status_code == 422
    assert httpx.get(srv.url + f"/runs/{ids[0]}").json()["spec"]["seed"] == 0  # detail has it


def _open(client: httpx.Client, url: str) -> httpx.Response:
    r = client.send(client.build_request("GET", url), stream=True)
    if r.status_code != 200:
        r.read()
    return r


@pytest.mark.slow
def test_event_streams_are_capped_per_client_and_in_total(start_server) -> None:  # type: ignore[no-untyped-def]
    env = {"HARNESS_SSE_MAX_PER_CLIENT": "2", "HARNESS_SSE_MAX_STREAMS": "3"}
    srv = start_server({**env, "HARNESS_MAX_CONCURRENCY": "1"})
    run = srv.post_run({**RUN, "limit": 1000}).json()  # long enough to keep streams open
    url = f"{srv.url}/runs/{run['id']}/events"

    def client(addr: str) -> httpx.Client:  # loopback clients with distinct source addresses
        return stack.enter_context(
            httpx.Client(transport=httpx.HTTPTransport(local_address=addr), timeout=30)
        )

    with ExitStack() as stack:
        a1, a2, a3, b, c = (client(x) for x in ["127.0.0.1"] * 3 + ["127.0.0.2", "127.0.0.3"])
        s1, s2 = _open(a1, url), _open(a2, url)
        assert (s1.status_code, s2.status_code) == (200, 200)
        r = _open(a3, url)
        assert r.status_code == 429 and "from this client (at most 2)" in r.json()["detail"]
        assert _open(b, url).status_code == 200  # another client still gets one
        r = _open(c, url)
        assert r.status_code == 429 and "on this server (at most 3)" in r.json()["detail"]
        # the stored events stay available without a stream
        assert _open(c, url + "?stream=false").status_code == 200
        s1.close()  # a closed stream frees its slot
        wait_for(lambda: _open(a3, url).status_code == 200, 30, 0.5)
    httpx.post(f"{srv.url}/runs/{run['id']}/cancel")


@pytest.mark.slow
def test_lone_surrogates_in_agent_text_become_fffd(start_server, stand_in) -> None:  # type: ignore[no-untyped-def]
    local = stand_in(models=("stand-in",), reply="I see \udcff here. PYTHON(./temp/function.py 1)")
    profiles = {"local": {"kind": "openai", "base_url": local.url + "/v1"}}
    srv = start_server({"HARNESS_PROVIDER_PROFILES": json.dumps(profiles)})
    body = {
        **RUN,
        "agent": "openai",
        "limit": 1,
        "agent_options": {"profile": "local", "model": "stand-in", "max_retries": 0},
        "budgets": {"max_rounds": 2},
    }
    r = srv.post_run(body)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    wait_for(
        lambda: httpx.get(f"{srv.url}/runs/{run_id}").json()["status"] in ("completed", "failed"),
        120,
    )
    (ep,) = httpx.get(f"{srv.url}/runs/{run_id}/episodes").json()
    assert ep["status"] == "budget_exhausted" and ep["rounds"] == 2, ep  # it went on
    detail = httpx.get(f"{srv.url}/episodes/{ep['id']}").json()
    said = [m["content"] for m in detail["messages"] if m["role"] == "assistant"]
    assert said == ["I see \ufffd here. PYTHON(./temp/function.py 1)"] * 2
    assert httpx.get(f"{srv.url}/runs").status_code == 200


@pytest.mark.parametrize("where", ["agent_options", "key"])
def test_lone_surrogate_in_options_is_422_and_the_server_stays_well(default_server, where) -> None:  # type: ignore[no-untyped-def]
    srv = default_server
    before = run_ids(srv)
    options = '{"x": "\\udcff"}' if where == "agent_options" else '{"\\udcff": 1}'
    raw = json.dumps({**RUN, "limit": 1})[:-1] + f', "agent_options": {options}}}'
    r = httpx.post(
        srv.url + "/runs", content=raw, headers={"content-type": "application/json"}, timeout=30
    )
    assert r.status_code == 422 and "lone surrogate" in r.text
    assert run_ids(srv) == before
