"""Fixtures: one small SAE built on the tiny random Llama into a private cache (shared by the SAE
tests of a session), and the real intervention service serving that model (and, once the service
serves SAEs, the built one from the cache's `sae` folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import stop_process
from support.intervention_server import start_server
from support.sae_cases import TINY

from interp_harness.function_store import benchmark as registry
from interp_harness.function_store.sae.benchmark import BENCHMARK
from interp_harness.function_store.sae.build import build_sae
from interp_harness.function_store.sae.catalog import SAECatalog


@pytest.fixture(autouse=True)
def sae_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record as its entry point declares it, for these tests only (an install may predate
    the entry point; other tests see the registry as installed)."""
    registry.families()  # the entry points first, so the teardown restores them
    monkeypatch.setitem(registry._REGISTERED, BENCHMARK.family, BENCHMARK)


@pytest.fixture(scope="session")
def sae_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sae-cache")


@pytest.fixture
def in_cache(sae_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HARNESS_CACHE_DIR pointing at the session's SAE cache for one test."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(sae_cache))
    return sae_cache


@pytest.fixture(scope="session")
def built(sae_cache: Path) -> SAECatalog:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_CACHE_DIR", str(sae_cache))
        return build_sae(TINY, progress=False)


@pytest.fixture(scope="session")
def sae_llama_url(
    built: SAECatalog, sae_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    # its own server (not the tiny llama of tests/model_services/intervention): it reads its
    # default SAE folder from the cache it is started with, the SAE built above
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_CACHE_DIR", str(sae_cache))
        proc, url = start_server("llama-tiny-random", tmp_path_factory.mktemp("iv") / "log")
    try:
        yield url
    finally:
        stop_process(proc)
