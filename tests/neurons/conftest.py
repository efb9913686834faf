"""Fixtures: SmolLM2's intervention service, started by the test itself (a real uvicorn
subprocess on loopback), shared by the neuron tests of a session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from model_services.intervention.client import InterventionClient
from tests.model_services.intervention.conftest import _served


@pytest.fixture(scope="session")
def smol_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _served("smollm2", tmp_path_factory)


@pytest.fixture(scope="session")
def smol(smol_url: str) -> Iterator[InterventionClient]:
    with InterventionClient(smol_url) as c:
        yield c
