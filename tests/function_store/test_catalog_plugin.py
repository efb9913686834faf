"""A family registered with `register_benchmark` (a plugin's) is listed, selected, parsed and
served by the generic catalog and runtime, which name no family."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from interp_harness.function_store import benchmark as registry
from interp_harness.function_store.benchmark import Benchmark, register_benchmark
from interp_harness.function_store.catalog import (
    Catalog,
    CatalogOptions,
    GenConfig,
    UnknownTarget,
    dataset_names,
    parse_id,
)
from interp_harness.function_store.runtime import call_target

TOY = Benchmark(
    family="toy",
    title="a toy family",
    sources={"toy-set": "catalog_toy_family:load", "toyfix": "catalog_toy_family:load_fixed"},
    fixed_datasets=("toyfix",),
    runners={"toy": "catalog_toy_family"},
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Benchmark]:
    registry.benchmarks()  # entry points first, so the registry is restored as it was
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    yield register_benchmark(TOY)


def test_plugin_family_is_listed_and_selected(toy: Benchmark) -> None:
    assert "toy" in registry.families()
    assert {"toy-set", "toyfix"} <= set(dataset_names())
    catalog = Catalog()
    ids = [t.id for t in catalog.list(family="toy")]
    assert ids == [*(f"toy-set/toy/f{i:05d}" for i in range(3)), "toyfix/m/0", "toyfix/m/1"]
    assert [t.id for t in catalog.list(dataset="toyfix")] == ["toyfix/m/0", "toyfix/m/1"]
    # an unfiltered listing holds the plugin's targets beside the built-in ones (small find-gen)
    small = Catalog(CatalogOptions(gen=GenConfig(n_numeric=5, n_strings=5)))
    assert set(ids) <= {t.id for t in small.list()}
    # the built-in families are not asked about the plugin's datasets, nor the plugin about theirs
    assert catalog.list(dataset="toy-set", family="numeric") == []
    assert catalog.list(dataset="find-v1", family="toy") == []


def test_plugin_ids_parse_and_serve(toy: Benchmark) -> None:
    assert parse_id("toy-set/toy/f00001") == ("toy-set", "toy", None)
    assert parse_id("toyfix/m/1") == ("toyfix", "toy", None)
    catalog = Catalog()
    target = catalog.get("toy-set/toy/f00002")
    assert target.family == "toy" and target.hidden.spec == {"i": 2}
    with pytest.raises(UnknownTarget):
        catalog.get("find-v1/toy/f00001")
    # the runner's module comes from the record's `runners`, imported on first use
    sys.modules.pop("catalog_toy_family", None)
    assert [o.output for o in call_target(catalog.get("toyfix/m/0"), ["ab"])] == ["AB"]


def test_without_the_record_the_family_is_unknown() -> None:
    with pytest.raises(ValueError, match="unknown family 'toy'"):
        Catalog().list(family="toy")
    with pytest.raises(UnknownTarget):
        Catalog().get("toy-set/toy/f00001")
