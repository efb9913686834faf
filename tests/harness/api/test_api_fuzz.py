"""Schemathesis against the real server's OpenAPI document: no request gets a 5xx. Plus the
inputs that used to get one (non-finite numbers, lone surrogates, huge integers) by hand."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from support import fuzz_settings
from support.trust_helpers import HarnessServer

EXAMPLES = 20  # per operation; bounded so that CI stays quick


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarnessServer]:
    srv = HarnessServer(tmp_path_factory.mktemp("fuzz"))
    srv.start()
    yield srv
    srv.stop()
    shutil.rmtree(srv.tmpdir, ignore_errors=True)


@pytest.fixture(scope="module")
def api_schema(fuzz_server: HarnessServer):  # type: ignore[no-untyped-def]
    return schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@fuzz_settings(EXAMPLES)
def test_no_server_errors(case) -> None:  # type: ignore[no-untyped-def]
    response = case.call(timeout=30)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:500]}"
    )


def _post_raw(srv: HarnessServer, text: str) -> httpx.Response:
    return httpx.post(
        srv.url + "/runs",
        content=text.encode(),
        headers={"content-type": "application/json"},
        timeout=30,
    )


BASE = {"agent": "scripted-numeric", "dataset": "find-v1", "ids": ["find-v1/numeric/f00150"]}


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (json.dumps(BASE)[:-1] + ', "agent_options": {"max_inputs_per_call": NaN}}', "finite"),
        (json.dumps(BASE)[:-1] + ', "agent_options": {"x": Infinity}}', "finite"),
        (json.dumps(BASE)[:-1] + ', "agent_options": {"x": "\\ud800"}}', "lone surrogate"),
        (json.dumps(BASE)[:-1] + ', "agent_options": {"\\udfff": 1}}', "lone surrogate"),
        (json.dumps(BASE)[:-1] + ', "family": "\\ud83d"}', "lone surrogate"),
        (json.dumps(BASE)[:-1] + ', "budgets": {"max_wall_s": NaN}}', "max_wall_s"),
        (json.dumps(BASE)[:-1] + ', "gen_seed": 1' + "0" * 40 + "}", "gen_seed"),
        (json.dumps(BASE)[:-1] + ', "seed": -1' + "0" * 40 + "}", "seed"),
        (
            json.dumps(BASE)[:-1] + ', "agent_options": ' + "[" * 40 + "]" * 40 + "}",
            "nested deeper",
        ),
        (json.dumps(BASE)[:-1] + ', "floor_for": "someone-elses-run"}', "floor_for"),
    ],
)
def test_bad_bodies_are_422(fuzz_server: HarnessServer, raw: str, says: str) -> None:
    r = _post_raw(fuzz_server, raw)
    assert r.status_code == 422, r.text
    assert says in r.text
    assert "NaN" not in r.text and "Infinity" not in r.text  # the input is not echoed


def test_nested_options_and_json_limits(fuzz_server: HarnessServer) -> None:
    deep: object = 1
    for _ in range(40):
        deep = {"a": deep}
    r = httpx.post(
        fuzz_server.url + "/runs",
        json=BASE | {"agent": "replay", "agent_options": {"messages": ["x"], "deep": deep}},
        timeout=30,
    )
    assert r.status_code == 422 and "nested deeper" in r.text


@pytest.mark.parametrize(
    ("path", "params", "headers"),
    [
        ("/runs", {"offset": 2**70}, {}),
        ("/runs", {"offset": 2**63}, {}),
        ("/targets", {"dataset": "find-v1", "offset": 2**64}, {}),
        ("/targets", {"dataset": "find-v1", "gen_seed": 2**64}, {}),
        ("/targets", {"dataset": "find-v1", "gen_seed": -1}, {}),
    ],
)
def test_huge_integers_are_422(
    fuzz_server: HarnessServer, path: str, params: dict, headers: dict
) -> None:
    r = httpx.get(fuzz_server.url + path, params=params, headers=headers, timeout=30)
    assert r.status_code == 422, r.text


def test_event_ids_are_bounded(fuzz_server: HarnessServer) -> None:
    r = httpx.post(fuzz_server.url + "/runs", json=BASE | {"floor": False}, timeout=60)
    assert r.status_code == 201, r.text
    url = f"{fuzz_server.url}/runs/{r.json()['id']}/events"
    assert httpx.get(url, params={"stream": "false", "after": 2**63}).status_code == 422
    for last in (b"9" * 40, "\u00b2".encode(), b"-1"):  # huge, a Unicode digit, not a digit
        got = httpx.get(
            url, params={"stream": "false"}, headers={"last-event-id": last}, timeout=30
        )
        assert got.status_code == 200, (last, got.text)
