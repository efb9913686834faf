"""Catalog source `sae`: one target per catalog latent of the built SAEs, ids and hidden spec per
the contract, nothing of the ground truth in the public part; DataUnavailable with the build
command when nothing is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.sae import targets
from interp_harness.function_store.sae.catalog import SAECatalog


def test_one_target_per_latent(built: SAECatalog, in_cache: Path) -> None:
    got = Catalog().list(dataset="sae")
    want = [f"sae/llama-tiny-random/{built.sae}/{r.latent}" for r in built.latents]
    assert [t.id for t in got] == want
    for t, r in zip(got, built.latents, strict=True):
        assert (t.dataset, t.family, t.variant) == ("sae", "sae", "llama-tiny-random")
        assert t.hidden.runner == "sae"
        assert t.hidden.spec == {
            "model": "llama-tiny-random",
            "sae": built.sae,
            "layer": 1,
            "component": "block_output",
            "latent": r.latent,
            "density": r.density,
        }
        assert t.hidden.description == r.reference
        assert t.public.prompt_family == "sae" and t.public.input_kind == "text"
        public = t.public_view().model_dump_json()
        assert r.reference not in public and t.hidden.canary not in public
        assert "density" not in public and "hook" not in public
    # ids resolve back through the generic catalog (a fixed dataset of family `sae`)
    assert Catalog().get(want[0]).hidden.spec["latent"] == built.latents[0].latent


def test_nothing_built_names_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    with pytest.raises(DataUnavailable, match="harness sae build"):
        targets.load("sae", CatalogOptions())
    with pytest.raises(DataUnavailable, match="harness sae build"):
        Catalog().list(dataset="sae")
    # listing every dataset leaves the source out instead of failing
    assert Catalog().list(family="sae") == []
    assert targets.load("neurons", CatalogOptions()) == []
