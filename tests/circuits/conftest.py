"""Fixtures: a handful of circuits targets built once per session into a private cache (three
library programs and three generated ones), shared by the circuits tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from interp_harness.function_store import benchmark as registry
from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.circuits.benchmark import BENCHMARK

# tracr's own compiler (the reference in test_compiled_model.py) spends most of its time in XLA's
# optimiser on models this small: unoptimised, it compiles about twice as fast, same numbers to
# the tests' tolerance. Read when jax starts its CPU backend, which no test has done yet here.
os.environ.setdefault(
    "XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
)

BUILD = cb.BuildOptions(programs=["frac_prevs", "sort", "hist"], gen_count=3, gen_seed=0)


@pytest.fixture(autouse=True)
def circuits_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record as its entry point declares it (an install may predate the entry point)."""
    registry.families()  # the entry points first, so the teardown restores them
    monkeypatch.setitem(registry._REGISTERED, BENCHMARK.family, BENCHMARK)


@pytest.fixture(scope="session")
def circuits_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("circuits-cache")


@pytest.fixture(scope="session")
def circuits_built(circuits_cache: Path) -> dict[str, list[cb.CircuitTruth]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_CACHE_DIR", str(circuits_cache))
        return cb.build(BUILD)


@pytest.fixture
def in_circuits_cache(
    circuits_built: dict, circuits_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """HARNESS_CACHE_DIR pointing at the session's built targets for one test."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(circuits_cache))
    return circuits_cache
