"""The examples of docs/agents.md work as written: the provider-profile JSON goes through the real
parser (`interp_harness.harness.providers.profiles.load_profiles`, both the inline and the `@file` form) and the policy
that picks a run's profile; the sweep agent's `Options` is what `POST /runs` checks; the agent runs
through `harness run` in its sandboxed host; the reply examples are what real targets print."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import HARNESS_CLI

from interp_harness.agents.openai_agent import OpenAIAgent
from interp_harness.harness.policy import ApiPolicy, RequestInvalid, profile_for
from interp_harness.harness.providers.profiles import ProfileError, get_profile, load_profiles

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "agents.md"


def fenced_block(marker: str) -> str:
    """The first fenced code block after the HTML comment that starts with `marker`."""
    text = DOC.read_text(encoding="utf-8")
    at = text.index(f"<!-- {marker}")
    m = re.compile(r"```[a-z]*\n(.*?)\n```", re.DOTALL).search(text, at)
    assert m is not None, f"no code block after {marker} in {DOC}"
    return m.group(1)


def test_profiles_example_parses_inline_and_from_a_file(tmp_path: Path) -> None:
    text = fenced_block("profiles-example")
    path = tmp_path / "profiles.json"
    path.write_text(text, encoding="utf-8")
    for spec in (text, f"@{path}"):
        profiles = load_profiles(spec)
        # the two built-in profiles stay, the doc's two are added
        assert sorted(profiles) == ["anthropic", "openai", "openai-small", "vllm-local"]
        local = profiles["vllm-local"]
        assert (local.kind, local.url, local.api_key_env) == (
            "openai",
            "http://127.0.0.1:8001/v1",
            None,
        )
        assert local.max_n == 1 and local.models is None  # the defaults the doc's table gives
        small = profiles["openai-small"]
        assert small.api_key_env == "OPENAI_API_KEY" and small.url == "https://api.openai.com/v1"
        assert small.models == ["gpt-4o-mini", "gpt-4o"] and small.max_tokens == 4096


def test_profiles_example_is_what_a_run_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", fenced_block("profiles-example"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # the doc's command: -o profile=vllm-local -o model=SmolLM2-135M-Instruct
    chosen = profile_for(OpenAIAgent, {"profile": "vllm-local", "model": "SmolLM2-135M-Instruct"})
    assert chosen is not None and chosen.url == "http://127.0.0.1:8001/v1"
    assert chosen.auth_headers() == {"authorization": "Bearer EMPTY"}  # no key: local server
    small = profile_for(OpenAIAgent, {"profile": "openai-small", "model": "gpt-4o-mini"})
    assert small is not None and small.auth_headers() == {"authorization": "Bearer sk-test"}
    with pytest.raises(ProfileError, match="offers models gpt-4o-mini, gpt-4o; not 'gpt-5'"):
        profile_for(OpenAIAgent, {"profile": "openai-small", "model": "gpt-5"})
    # the error the doc quotes for an unknown name
    with pytest.raises(ProfileError) as e:
        get_profile("x")
    assert str(e.value) in DOC.read_text(encoding="utf-8").replace("\n", " ")


def test_malformed_profiles_are_refused_with_the_docs_messages() -> None:
    with pytest.raises(ProfileError, match="HARNESS_PROVIDER_PROFILES is not valid JSON"):
        load_profiles("{not json")
    with pytest.raises(ProfileError, match="provider profile 'vllm-local'"):
        load_profiles(json.dumps({"vllm-local": {"kind": "openai", "base_url": "ftp://x"}}))
    with pytest.raises(ProfileError, match="provider profile 'p'"):
        load_profiles(json.dumps({"p": {"kind": "openai", "api_key": "sk-in-the-file"}}))


@pytest.fixture
def sweep_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_agents.py").write_text(fenced_block("sweep-agent-example"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agents", None)
    return tmp_path


def test_sweep_agent_options_are_what_the_api_checks(sweep_module: Path) -> None:
    import my_agents

    cls = my_agents.SweepAgent
    ApiPolicy().check_options(cls, {"points": 17})
    with pytest.raises(RequestInvalid, match="agent_options.pionts"):
        ApiPolicy().check_options(cls, {"pionts": 17})  # a typo is refused, not ignored
    with pytest.raises(RequestInvalid, match="agent_options.points"):
        ApiPolicy().check_options(cls, {"points": 1})  # ge=2
    assert cls(points=5).opts.points == 5 and cls().opts.low == -128.0


def test_sweep_agent_runs_in_its_host_and_is_scored(
    sweep_module: Path, tmp_path: Path, needs_bwrap: None
) -> None:
    """The doc's agent through the CLI, agent host and all, as first-evaluation.md runs it."""
    env = {
        **os.environ,
        "HARNESS_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(sweep_module), str(ROOT)]),
    }
    out = subprocess.run(
        [*HARNESS_CLI, "run", "--agent", "my_agents:SweepAgent"]
        + ["-o", "points=17", "--dataset", "find-gen", "--family", "numeric", "-n", "2"]
        + ["--seed", "0", "--no-floor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    run = json.loads(out.stdout)
    assert run["status"] == "completed" and run["errors"] == []
    assert run["usage"]["inputs"] == 2 * 17  # one call of 17 grid points per target
    nmse = next(m for m in run["metrics"] if m["metric"] == "nmse")
    assert nmse["n"] == 2 and nmse["n_errors"] == 0  # its code ran and was scored


@pytest.mark.parametrize(
    ("target", "inputs"),
    [
        ("find-v1/numeric/f00154", ["0", "2", "-3", "100"]),
        ("find-gen/strings/s0/f00000", ["hello", "five", "two words"]),
        ("find-gen/strings/s0/f00001", ["hello", "five"]),
    ],
)
def test_reply_examples_are_what_the_targets_print(
    target: str, inputs: list[str], tmp_path: Path
) -> None:
    env = {**os.environ, "HARNESS_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [*HARNESS_CLI, "targets", "call", target, *inputs],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    pairs = out.stdout.split("Function input - output pairs: ", 1)[1].rstrip("\n")
    assert f"`{pairs}` ({target}" in DOC.read_text(encoding="utf-8")
