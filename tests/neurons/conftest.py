"""Fixtures: a client of the session's SmolLM2 intervention service (`smol_url`,
tests/support/shared_services.py), and helpers for neuron runs served over the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from interp_harness.model_services.intervention.client import InterventionClient


@pytest.fixture(scope="session")
def smol(smol_url: str) -> Iterator[InterventionClient]:
    with InterventionClient(smol_url) as c:
        yield c
