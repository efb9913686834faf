"""Pre-flight (issue 12): a run that cannot work is refused before it is stored: CLI exit code 2,
REST 400, each with a message that says what is wrong; `--no-preflight` stores it anyway."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from support.hardening_helpers import OpenAIStandIn, dead_port

NUMERIC = ["--dataset", "find-gen", "--family", "numeric", "--limit", "1", "--no-floor"]
ONE_ROUND = ["--max-rounds", "1"]


def stored_runs(home: Path) -> list[str]:
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store

    db = home / "harness.db"
    if not db.exists():
        return []
    store = Store(make_engine(f"sqlite:///{db}"))
    try:
        return [r.id for r in store.runs.latest(limit=100, offset=0)]
    finally:
        store.engine.dispose()


def refused(p, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "the run cannot work, so it was not stored" in p.stderr
    assert stored_runs(tmp_path / "home") == []
    return p.stderr


# ---- CLI ------------------------------------------------------------------------------------
def test_cli_missing_key(cli_in_process, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    err = refused(cli_in_process("run", "--agent", "openai", *NUMERIC), tmp_path)
    assert "provider profile 'openai': the operator's environment has no OPENAI_API_KEY" in err


def test_cli_no_preflight_stores_the_run_and_shows_why_it_failed(
    cli_in_process, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    p = cli_in_process("run", "--agent", "openai", *NUMERIC, *ONE_ROUND, "--no-preflight")
    assert p.returncode == 1, p.stderr[-2000:]
    assert len(stored_runs(tmp_path / "home")) == 1
    assert "no OPENAI_API_KEY" in p.stdout  # the summary's errors block (issue 12, part 1)


def test_cli_dead_local_server(cli_in_process, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"http://127.0.0.1:{dead_port()}/v1"
    err = refused(
        cli_in_process("run", "--agent", "openai", "-o", f"base_url={url}", *NUMERIC), tmp_path
    )
    assert f"the openai endpoint given by base_url at {url} does not answer" in err
    assert "Connection refused" in err or "ConnectError" in err


def test_cli_wrong_model_then_right_model(cli_in_process, stand_in, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = stand_in(models=("stand-in",))
    base = f"base_url={srv.url}/v1"
    err = refused(
        cli_in_process("run", "--agent", "openai", "-o", base, "-o", "model=nope", *NUMERIC),
        tmp_path,
    )
    assert f"at {srv.url}/v1 has no model 'nope' (it serves: stand-in)" in err
    # no model option: the agent's default (gpt-4o) is what it would ask for
    err = refused(cli_in_process("run", "--agent", "openai", "-o", base, *NUMERIC), tmp_path)
    assert "has no model 'gpt-4o'" in err
    assert srv.requests == [("GET", "/v1/models")] * 2  # nothing but the probe

    p = cli_in_process(
        "run", "--agent", "openai", "-o", base, "-o", "model=stand-in", *NUMERIC, *ONE_ROUND
    )
    assert p.returncode in (0, 1), p.stderr[-2000:]  # stored and run (one round: budget)
    assert len(stored_runs(tmp_path / "home")) == 1
    assert ("POST", "/v1/chat/completions") in srv.requests


def test_cli_missing_data(cli_in_process, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    argv = ["run", "--agent", "scripted-numeric", "--dataset", "find-v1", "--family", "numeric"]
    err = refused(
        cli_in_process(*argv, env={"HARNESS_DATA_DIR": str(tmp_path / "nodata")}), tmp_path
    )
    assert "reference file 'find/numeric/data.json' not found" in err
    assert "harness data fetch find" in err


def test_cli_empty_selection(cli_in_process, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    argv = ["run", "--agent", "scripted-numeric", "--dataset", "find-gen", "--family", "numeric"]
    err = refused(cli_in_process(*argv, "--variant", "nosuch"), tmp_path)
    assert "empty selection: no available target matches dataset=find-gen, family=numeric" in err


def test_cli_entities_need_a_backbone(cli_in_process, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    argv = ["run", "--agent", "scripted-entities", "--dataset", "find-gen", "--family", "entities"]
    err = refused(cli_in_process(*argv, "--limit", "1"), tmp_path)
    assert "entity and relation targets need the LM backbone: set HARNESS_BACKBONE_URL" in err
    url = f"http://127.0.0.1:{dead_port()}/v1"
    err = refused(
        cli_in_process(*argv, "--limit", "1", env={"HARNESS_BACKBONE_URL": url}), tmp_path
    )
    assert f"the LM backbone (HARNESS_BACKBONE_URL) at {url} does not answer" in err


def test_cli_configured_judge_must_answer_and_serve_its_model(
    cli_in_process, stand_in, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    argv = ["run", "--agent", "scripted-numeric", *NUMERIC]
    scored = {"HARNESS_SCORE_HOOK": "default"}
    url = f"http://127.0.0.1:{dead_port()}/v1"
    err = refused(cli_in_process(*argv, env={**scored, "HARNESS_JUDGE_URL": url}), tmp_path)
    assert f"the judge (HARNESS_JUDGE_URL) at {url} does not answer" in err
    judge = stand_in(models=("SmolLM2-135M-Instruct",))
    err = refused(
        cli_in_process(*argv, env={**scored, "HARNESS_JUDGE_URL": judge.url + "/v1"}), tmp_path
    )
    assert "has no model 'vicuna-13b-v1.1' (it serves: SmolLM2-135M-Instruct)" in err


def test_cli_neurons_need_an_intervention_service_serving_their_model(
    cli_in_process, stand_in, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    argv = ["run", "--agent", "scripted-neuron", "--dataset", "neuron", "--variant", "smollm2"]
    argv += ["--limit", "1", "--no-floor"]
    err = refused(cli_in_process(*argv), tmp_path)
    assert (
        "these targets read a model through the intervention service: set HARNESS_INTERVENTION_URL"
        in err
    )
    url = f"http://127.0.0.1:{dead_port()}"
    err = refused(cli_in_process(*argv, env={"HARNESS_INTERVENTION_URL": url}), tmp_path)
    assert f"the intervention service (HARNESS_INTERVENTION_URL) at {url}/v1 does not answer" in err
    other = stand_in(models=("gpt2-tiny-random",))  # answers, but serves another model
    err = refused(cli_in_process(*argv, env={"HARNESS_INTERVENTION_URL": other.url}), tmp_path)
    assert "targets of model 'smollm2' need an intervention service serving it; " in err
    assert "HARNESS_INTERVENTION_URL serves gpt2-tiny-random" in err


# ---- REST -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rest(start_module_server):  # type: ignore[no-untyped-def]
    """One server for the module: a refused run stores nothing, so each test compares the run
    list before and after its own request."""
    local = OpenAIStandIn(("stand-in",), "Hello.")
    profiles = {
        "local": {"kind": "openai", "base_url": local.url + "/v1"},
        "dead": {"kind": "openai", "base_url": f"http://127.0.0.1:{dead_port()}/v1"},
        "keyless": {"kind": "openai", "api_key_env": "HARDENING_TEST_UNSET_KEY"},
    }
    env = {"HARNESS_PROVIDER_PROFILES": json.dumps(profiles)}
    yield start_module_server(env), local
    local.close()


def run_ids(srv) -> list[str]:  # type: ignore[no-untyped-def]
    return [x["id"] for x in httpx.get(srv.url + "/runs").json()]


def _body(**over):  # type: ignore[no-untyped-def]
    base = {"agent": "openai", "dataset": "find-gen", "family": "numeric", "limit": 1}
    return {**base, "floor": False, "budgets": {"max_rounds": 1}, **over}


@pytest.mark.parametrize(
    "body, says",
    [
        (
            _body(agent_options={"profile": "keyless"}),
            "provider profile 'keyless': the operator's environment has no "
            "HARDENING_TEST_UNSET_KEY",
        ),
        (
            _body(agent_options={"profile": "dead"}),
            "of provider profile 'dead' at http://127.0.0.1:",
        ),
        (
            _body(agent_options={"profile": "local", "model": "nope"}),
            "has no model 'nope' (it serves: stand-in)",
        ),
        (
            _body(agent="scripted-numeric", family="numeric", variant="nosuch"),
            "empty selection: no available target matches",
        ),
        (
            _body(agent="scripted-entities", family="entities"),
            "entity and relation targets need the LM backbone",
        ),
    ],
)
def test_rest_refuses_with_400_and_stores_nothing(rest, body, says) -> None:  # type: ignore[no-untyped-def]
    srv, _ = rest
    before = run_ids(srv)
    r = srv.post_run(body)
    assert r.status_code == 400, r.text
    assert r.json()["detail"].startswith("pre-flight check failed: ")
    assert says in r.json()["detail"]
    assert run_ids(srv) == before


def test_rest_missing_data_is_400(start_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = start_server({"HARNESS_DATA_DIR": str(tmp_path / "nodata")})
    r = srv.post_run({"agent": "scripted-numeric", "dataset": "find-v1", "family": "numeric"})
    assert r.status_code == 400 and "harness data fetch find" in r.json()["detail"]
    assert httpx.get(srv.url + "/runs").json() == []


def test_rest_good_profile_and_model_is_stored(rest) -> None:  # type: ignore[no-untyped-def]
    srv, local = rest
    before, seen = run_ids(srv), len(local.requests)
    r = srv.post_run(_body(agent_options={"profile": "local", "model": "stand-in"}))
    assert r.status_code == 201, r.text
    assert run_ids(srv) == [r.json()["id"], *before]
    assert local.requests[seen] == ("GET", "/v1/models")  # the pre-flight probe came first
