"""The session's RAVEL instance cache on SmolLM2: the city instance (the one the catalog's RAVEL
targets are scored on) is built once per session from the shared intervention service, with its
progress recorded; every RAVEL test on SmolLM2 reads it (a hit) or adds to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from interp_harness.function_store.ravel.instances import Instance, build
from interp_harness.function_store.ravel.targets import INSTANCES
from interp_harness.model_services.intervention.client import InterventionClient


@dataclass(frozen=True)
class BuiltCity:
    cache: Path  # HARNESS_RAVEL_CACHE
    instance: Instance
    progress: list[tuple[int, int]]  # what the build reported: (done, total)


@pytest.fixture(scope="session")
def ravel_city(smol_url: str, tmp_path_factory: pytest.TempPathFactory) -> BuiltCity:
    cache = tmp_path_factory.mktemp("ravel-cache")
    seen: list[tuple[int, int]] = []
    with pytest.MonkeyPatch.context() as mp, InterventionClient(smol_url) as client:
        mp.setenv("HARNESS_RAVEL_CACHE", str(cache))
        inst = build(client, INSTANCES["city"], progress=lambda d, t: seen.append((d, t)))
    return BuiltCity(cache, inst, seen)
