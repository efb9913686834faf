"""Issue 11, reproduction 1: a run request can never make the server send a key to a URL of the
request's choosing. Real server, real loopback listeners: one stands in for the operator's
OpenAI-compatible endpoint, one for an address a caller would like the key sent to."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from support import HARNESS_CLI, wait_for
from support.trust_helpers import ROOT

SERVER_KEY = "sk-server-env-key-5f1d2c"  # OPENAI_API_KEY of the server's environment
PROFILE_KEY = "sk-operator-profile-key-93ab"  # the key of the operator's profile "op"
TARGET = "find-v1/numeric/f00150"


@pytest.fixture
def setup(start_server, listener):  # type: ignore[no-untyped-def]
    operator, attacker = listener("I need more information."), listener()
    profiles = {"op": {"kind": "openai", "base_url": operator.url + "/v1", "api_key_env": "OP_KEY"}}
    srv = start_server(
        {
            "OPENAI_API_KEY": SERVER_KEY,
            "ANTHROPIC_API_KEY": SERVER_KEY,
            "OP_KEY": PROFILE_KEY,
            "HARNESS_PROVIDER_PROFILES": json.dumps(profiles),
        }
    )
    return srv, operator, attacker


def _body(**options: object) -> dict:
    return {
        "agent": "openai",
        "agent_options": {"model": "x", **options},
        "dataset": "find-v1",
        "ids": [TARGET],
        "floor": False,
        "budgets": {"max_rounds": 2},
    }


@pytest.mark.slow
def test_request_cannot_choose_the_url_or_key(setup) -> None:  # type: ignore[no-untyped-def]
    srv, operator, attacker = setup
    for options in (
        {"base_url": attacker.url + "/v1"},
        {"base_url": attacker.url + "/v1", "profile": "op"},
        {"api_key": "sk-callers-own"},
    ):
        r = srv.post_run(_body(**options))
        assert r.status_code == 422, r.text
        [err] = r.json()["detail"]
        assert err["loc"][:2] == ["body", "agent_options"]
        assert "provider profile" in err["msg"] and "operator" in err["msg"]
        assert "sk-callers-own" not in r.text  # the input is not echoed back
    r = srv.post_run(_body(base_url=attacker.url) | {"agent": "anthropic"})
    assert r.status_code == 422 and "base_url is not accepted" in r.text
    # other ways to steer the client are not options at all
    for key in ("default_headers", "organization", "http_client", "OPENAI_BASE_URL"):
        r = srv.post_run(_body(**{key: attacker.url}))
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == key, r.text
    r = srv.post_run(_body(profile="nope"))
    assert r.status_code == 400 and "unknown provider profile 'nope'" in r.json()["detail"]
    r = srv.post_run(_body(profile="anthropic"))  # a profile of another kind
    assert r.status_code == 400 and "is for anthropic agents" in r.json()["detail"]

    assert httpx.get(srv.url + "/runs").json() == []  # nothing was queued
    time.sleep(1.0)  # had anything been queued, the scheduler (0.1 s poll) would have called out
    assert attacker.requests == [] and operator.requests == []


def test_profile_by_name_reaches_only_the_operators_endpoint(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv, operator, attacker = setup
    r = srv.post_run(_body(profile="op"))
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    assert r.json()["spec"]["agent_options"] == {"model": "x", "profile": "op"}
    wait_for(
        lambda: httpx.get(f"{srv.url}/runs/{run_id}").json()["status"] in ("completed", "failed"),
        90,
    )
    assert operator.requests, srv.log()[-2000:]
    # the run's pre-flight lists the models, then the agent talks
    assert {q["path"] for q in operator.requests} == {"/v1/models", "/v1/chat/completions"}
    assert {q["headers"].get("authorization") for q in operator.requests} == {
        f"Bearer {PROFILE_KEY}"
    }
    assert attacker.requests == []

    # no key in anything the API serves, the server's log or the database
    served = [
        httpx.get(f"{srv.url}/runs").text,
        httpx.get(f"{srv.url}/runs/{run_id}").text,
        httpx.get(f"{srv.url}/runs/{run_id}/events", params={"stream": "false"}).text,
    ]
    for ep in httpx.get(f"{srv.url}/runs/{run_id}/episodes").json():
        served.append(httpx.get(f"{srv.url}/episodes/{ep['id']}").text)
    db = (srv.home / "harness.db").read_bytes() + b"".join(
        p.read_bytes() for p in srv.home.glob("harness.db-*")
    )
    for key in (SERVER_KEY, PROFILE_KEY):
        assert all(key not in text for text in served)
        assert key not in srv.log()
        assert key.encode() not in db


def _cli(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HARNESS_HOME": str(tmp_path / "cli-home"),
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_SCORE_HOOK": "none",
        "OPENAI_API_KEY": SERVER_KEY,
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DATABASE_URL", None)
    argv = [*HARNESS_CLI, "run", "--agent", "openai", "--dataset"]
    argv += ["find-v1", "--id", TARGET, "--no-floor", "--max-rounds", "1", "--json"]
    for o in options:
        argv += ["-o", o]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_operator_keeps_base_url_but_keys_are_never_stored(tmp_path: Path, listener) -> None:  # type: ignore[no-untyped-def]
    local = listener("I need more information.")
    p = _cli(tmp_path, f"base_url={local.url}/v1", "model=x")
    assert p.returncode == 0, p.stderr[-3000:]
    assert [q["path"] for q in local.requests] == ["/v1/models", "/v1/chat/completions"]
    # as documented: the environment's key goes with an operator-given base_url
    assert {q["headers"]["authorization"] for q in local.requests} == {f"Bearer {SERVER_KEY}"}
    assert SERVER_KEY not in p.stdout

    p = _cli(tmp_path, f"base_url={local.url}/v1", "api_key=sk-typed-on-the-cli")
    assert p.returncode == 2 and "agent option 'api_key' is refused" in p.stderr
    assert len(local.requests) == 2
    db = (tmp_path / "cli-home" / "harness.db").read_bytes()
    assert b"sk-typed-on-the-cli" not in db
