"""Fixtures: the intervention service started by the test itself as a real uvicorn subprocess
(`harness intervention serve`) on a free loopback port, one per model and session, and the same
model loaded in the test process for reference forward passes (random models are seeded, so both
hold the same weights)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import free_port, stop_process, wait_until_up

from model_services.intervention import model as model_mod
from model_services.intervention.client import InterventionClient

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 600  # pyvene's import and a cold GGUF conversion are slow on a busy CPU


def start_server(model: str, log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),  # tiny models; shared CPU
    }
    cmd = [sys.executable, "-m", "harness.cli", "intervention", "serve", "--model", model]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [*cmd, "--device", "cpu", "--port", str(port), *extra],
            cwd=ROOT,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(proc, url + "/health", log.read_text, START_TIMEOUT_S, poll=0.5)
    return proc, url


def _served(model: str, factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    proc, url = start_server(model, factory.mktemp("iv") / "server.log", *extra)
    try:
        yield url
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def gpt2_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # a small token budget: requests below are split into several micro-batches
    yield from _served("gpt2-tiny-random", tmp_path_factory, "--batch-tokens", "96")


@pytest.fixture(scope="session")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _served("llama-tiny-random", tmp_path_factory, "--batch-tokens", "96")


@pytest.fixture(scope="session", params=["gpt2", "llama"])
def served(request: pytest.FixtureRequest) -> tuple[InterventionClient, model_mod.LoadedModel]:
    """(client, the same model loaded here) for each architecture."""
    url = request.getfixturevalue(f"{request.param}_url")
    loaded = model_mod.load(f"{request.param}-tiny-random", device="cpu", dtype="float32")
    return InterventionClient(url), loaded
