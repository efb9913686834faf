from __future__ import annotations

import pytest

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.function_store.models import Target


@pytest.fixture(scope="session")
def v1_targets() -> dict[str, Target]:
    targets = Catalog(CatalogOptions()).list(dataset="find-v1", family="numeric")
    return {t.id.rsplit("/", 1)[-1]: t for t in targets}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    # MLP training caches go to a per-test directory, never the user's cache
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
