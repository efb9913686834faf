"""Refuse what cannot work, suggest what was meant (issue 40 §6): an agent that declares the
families it plays (every built-in) is refused by pre-flight on targets of another family, with
the agents that fit; a custom agent declares nothing and is not refused; mistyped datasets and
families get a did-you-mean; the `--no-preflight` hint follows only a pre-flight check's refusal.
`harness run` and `harness targets list` run in this process (CliRunner); `POST /runs` on the real
app on loopback."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from support.run_support import cli_env, serve_app
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

TOKEN = "family-preflight-token"
ONE = ["--limit", "1", "--seed", "0", "--no-floor", "--max-rounds", "3"]
HINT = "--no-preflight"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)


def _cli(env: dict[str, str], *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args), env=env, terminal_width=300)
    return r.exit_code, " ".join(r.stderr.split())


def _stored(env: dict[str, str]) -> list[str]:
    return [r.agent for r in Store(make_engine(env["DATABASE_URL"])).runs.latest()]


def test_a_builtin_is_refused_on_a_family_it_does_not_play(env: dict[str, str]) -> None:
    code, err = _cli(env, "run", "-a", "scripted-numeric", "-d", "find-gen", "-f", "strings", *ONE)
    assert code == 2, err
    assert (
        "agent 'scripted-numeric' plays numeric targets only, and 1 of the 1 selected targets "
        "are strings" in err
    ), err
    # the agents that fit: the family's own, then those that play any family
    fit = err.split("Agents that play strings: ")[1]
    assert fit.startswith("scripted-strings, scripted-strings-code; any family: "), err
    assert {"openai", "anthropic", "replay"} <= set(fit.split(": ")[1].replace(",", "").split())
    assert "scripted-numeric" not in fit and "interpolation" not in fit
    assert HINT in err  # a pre-flight check refused it: --no-preflight would skip that check
    assert _stored(env) == []


def test_no_preflight_stores_what_preflight_refused(env: dict[str, str]) -> None:
    code, err = _cli(
        env,
        "run",
        "-a",
        "scripted-numeric",
        "-d",
        "find-gen",
        "-f",
        "strings",
        "--no-preflight",
        *ONE,
    )
    assert code == 0, err
    assert _stored(env) == ["scripted-numeric"]


def test_a_custom_agent_declares_nothing_and_is_not_refused(env: dict[str, str]) -> None:
    # orch_agents:ProbeAgent (tests/harness/runs) declares no families: it may try any
    code, err = _cli(
        env, "run", "-a", "orch_agents:ProbeAgent", "-d", "find-gen", "-f", "strings", *ONE,
        "-o", "n_calls=1",
    )  # fmt: skip
    assert code == 0, err
    assert _stored(env) == ["orch_agents:ProbeAgent"]


def test_typos_of_dataset_and_family_get_the_closest_and_no_preflight_hint(
    env: dict[str, str],
) -> None:
    code, err = _cli(env, "run", "-a", "scripted-numeric", "-d", "find-gne", "-f", "numeric", *ONE)
    assert code == 2 and "unknown dataset 'find-gne'. Did you mean 'find-gen'?" in err, err
    assert HINT not in err  # --no-preflight would not help: the request itself is wrong
    code, err = _cli(env, "run", "-a", "scripted-numeric", "-d", "find-gen", "-f", "numerc", *ONE)
    assert code == 2 and "unknown family 'numerc'. Did you mean 'numeric'?" in err, err
    assert HINT not in err
    code, err = _cli(env, "run", "-a", "scripted-numerc", "-d", "find-gen", "-f", "numeric", *ONE)
    assert code == 2 and "Did you mean 'scripted-numeric'?" in err and HINT not in err, err
    assert _stored(env) == []
    code, err = _cli(env, "targets", "list", "-d", "fnd-v1")
    assert code == 2 and "unknown dataset 'fnd-v1'. Did you mean 'find-v1'?" in err, err
    code, err = _cli(env, "targets", "list", "-d", "find-v1", "-f", "strngs")
    assert code == 2 and "unknown family 'strngs'. Did you mean 'strings'?" in err, err
    # nothing close: the known names alone
    code, err = _cli(env, "targets", "list", "-d", "zzz")
    assert code == 2 and "Did you mean" not in err and "Known: find-v1, find-gen" in err, err


def test_rest_refuses_a_family_the_agent_does_not_play(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in {**env, "HARNESS_API_TOKENS": TOKEN}.items():
        monkeypatch.setenv(k, v)
    body = {"agent": "scripted-strings", "dataset": "find-gen", "family": "numeric", "limit": 1}
    with serve_app() as url:
        r = httpx.post(
            f"{url}/runs", json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "agent 'scripted-strings' plays strings targets only" in detail, detail
    assert (
        "Agents that play numeric: interpolation, scripted-numeric, scripted-numeric-code; any family:"
        in detail
    )
    assert _stored(env) == []


@pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="labs need bubblewrap (Debian `bubblewrap`)"
)
def test_a_code_mode_run_is_refused_when_no_lab_starts(env: dict[str, str]) -> None:
    """Mode `code` starts a lab per episode: pre-flight starts one first, so an operator's lab
    setting that cannot work (a package this Python lacks) refuses the run once, with the cause,
    instead of failing every episode; with the default setting the same run is admitted."""
    args = (
        "run",
        "-a",
        "scripted-numeric-code",
        "--mode",
        "code",
        "-d",
        "find-gen",
        "-f",
        "numeric",
    )
    bad = env | {"HARNESS_LAB_PACKAGES": "numpy,no_such_lab_package"}
    code, err = _cli(bad, *args, *ONE)
    assert code == 2, err
    assert "protocol mode 'code' needs a lab, and none starts here" in err, err
    assert "no_such_lab_package" in err and HINT in err, err
    assert _stored(bad) == []
    code, err = _cli(env, *args, *ONE)
    assert code == 0, err
    assert _stored(env) == ["scripted-numeric-code"]
