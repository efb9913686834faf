"""A mistyped agent option or agent name is refused with the closest right one (issue 29 §2):
`harness run` (CliRunner, the real command) refuses an option the agent's `Options` does not
declare, as `POST /runs` (the real app on loopback) already did, both naming the closest; an
unknown agent name gets the closest known one on both."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from support.run_support import cli_env, serve_app
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

TOKEN = "option-typos-token"
SELECT = ["-d", "find-v1", "-f", "numeric", "--limit", "1", "--no-floor", "--max-rounds", "2"]
DOWN = "http://127.0.0.1:9/v1"  # nothing listens: a refusal must come before any probe


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)


def _cli(env: dict[str, str], *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["run", *args], env=env, terminal_width=300)
    return r.exit_code, " ".join(r.stderr.split())


def _stored(env: dict[str, str]) -> int:
    return len(Store(make_engine(env["DATABASE_URL"])).runs.latest())


def test_cli_refuses_a_mistyped_option(env: dict[str, str]) -> None:
    code, err = _cli(env, "-a", "openai", "-o", f"base_url={DOWN}", "-o", "temprature=0", *SELECT)
    assert code == 2, err
    assert "unknown option 'temprature' for agent 'openai'; did you mean 'temperature'?" in err
    assert err.count("unknown option") == 1  # base_url is the operator's to give: accepted
    code, err = _cli(env, "-a", "scripted-numeric", "-o", "max_input_per_call=50", *SELECT)
    assert code == 2 and "did you mean 'max_inputs_per_call'?" in err, err
    assert _stored(env) == 0


def test_cli_keeps_declared_options(env: dict[str, str]) -> None:
    code, err = _cli(env, "-a", "scripted-numeric", "-o", "max_inputs_per_call=50", *SELECT)
    assert code == 0, err
    assert _stored(env) == 1


def test_cli_names_the_closest_agent(env: dict[str, str]) -> None:
    code, err = _cli(env, "-a", "scripted-numerc", *SELECT)
    assert code == 2 and "unknown agent 'scripted-numerc'. Did you mean 'scripted-numeric'?" in err
    assert _stored(env) == 0


def test_rest_names_the_closest_option_and_agent(env: dict[str, str], monkeypatch) -> None:
    for k, v in {**env, "HARNESS_API_TOKENS": TOKEN}.items():
        monkeypatch.setenv(k, v)
    base = {"dataset": "find-v1", "family": "numeric", "limit": 1, "floor": False}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serve_app() as url:
        typo = httpx.post(
            f"{url}/runs",
            json=base | {"agent": "openai", "agent_options": {"temprature": 0}},
            headers=auth,
            timeout=60,
        )
        agent = httpx.post(f"{url}/runs", json=base | {"agent": "opnai"}, headers=auth, timeout=60)
    assert typo.status_code == 422, typo.text
    (e,) = typo.json()["detail"]
    assert e["loc"] == ["body", "agent_options", "temprature"]
    assert e["msg"].endswith("; did you mean 'temperature'?"), e
    assert agent.status_code == 400, agent.text
    assert "unknown agent 'opnai'. Did you mean 'openai'?" in agent.json()["detail"]
    assert _stored(env) == 0
