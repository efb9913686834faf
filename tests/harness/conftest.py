"""Fixtures: the real server (`harness serve` subprocess) from the api helpers (tests/harness/api),
one per test or one per module, a loopback OpenAI-compatible stand-in, and the CLI as a subprocess
or in this process."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import run_cli
from support.hardening_helpers import OpenAIStandIn
from support.trust_helpers import ROOT, HarnessServer

DATA = os.environ.get("HARNESS_DATA_DIR") or str(ROOT.parent / "shared" / "data")


def _servers(new_home: Callable[[], Path]) -> Iterator[Callable[..., HarnessServer]]:
    """A starter of `harness serve` processes, each in a fresh home; all stopped at the end."""
    servers: list[HarnessServer] = []

    def start(env: dict[str, str] | None = None) -> HarnessServer:
        s = HarnessServer(new_home(), {"HARNESS_DATA_DIR": DATA, **(env or {})})
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()
        shutil.rmtree(s.tmpdir, ignore_errors=True)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., HarnessServer]]:
    homes = itertools.count()
    yield from _servers(lambda: tmp_path / f"home{next(homes)}")


@pytest.fixture(scope="module")
def start_module_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., HarnessServer]]:
    """`start_server` shared by a module's tests: for API contracts where the process is not the
    point (each server start is an interpreter start and the app's imports)."""
    yield from _servers(lambda: tmp_path_factory.mktemp("home"))


@pytest.fixture
def stand_in() -> Iterator[Callable[..., OpenAIStandIn]]:
    made: list[OpenAIStandIn] = []

    def make(models: tuple[str, ...] = ("stand-in",), reply: str = "Hello.") -> OpenAIStandIn:
        made.append(OpenAIStandIn(models, reply))
        return made[-1]

    yield make
    for x in made:
        x.close()


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "HARNESS_HOME": str(home),
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_SCORE_HOOK": "none",
        "HARNESS_DATA_DIR": DATA,
        "PYTHONPATH": str(ROOT),
    }
    for k in (
        "DATABASE_URL",
        "HARNESS_DATABASE_URL",
        "OPENAI_API_KEY",
        "HARNESS_BACKBONE_URL",
        "HARNESS_INTERVENTION_URL",
    ):
        env.pop(k, None)
    for k in [k for k in env if k.startswith("HARNESS_JUDGE_")]:
        env.pop(k)
    env.update(extra)
    return env


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*argv: str, env: dict[str, str] | None = None, timeout: float = 300):  # type: ignore[no-untyped-def]
        return subprocess.run(
            [sys.executable, "-m", "interp_harness.harness.cli", *argv],
            env=cli_env(tmp_path / "home", **(env or {})),
            cwd=str(tmp_path),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture
def cli_in_process(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`cli`, run by this process (support.run_cli): for tests that check only what a command
    prints and stores."""

    def run(*argv: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return run_cli(list(argv), cli_env(tmp_path / "home", **(env or {})), tmp_path)

    return run
