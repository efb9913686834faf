"""Fixtures: the tiny random models' intervention services (intervention_server.py), one per model
and session, small micro-batches, and the same model loaded in the test process for reference
forward passes (random models are seeded, so both hold the same weights)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.intervention_server import serve_intervention

from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention.client import InterventionClient


@pytest.fixture(scope="session")
def gpt2_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # a small token budget: requests below are split into several micro-batches
    yield from serve_intervention("gpt2-tiny-random", tmp_path_factory, "--batch-tokens", "96")


@pytest.fixture(scope="session")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_intervention("llama-tiny-random", tmp_path_factory, "--batch-tokens", "96")


@pytest.fixture(scope="session", params=["gpt2", "llama"])
def served(request: pytest.FixtureRequest) -> tuple[InterventionClient, model_mod.LoadedModel]:
    """(client, the same model loaded here) for each architecture."""
    url = request.getfixturevalue(f"{request.param}_url")
    loaded = model_mod.load(f"{request.param}-tiny-random", device="cpu", dtype="float32")
    return InterventionClient(url), loaded
