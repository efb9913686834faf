"""Preparing MLP targets for a sandbox: weights travel inline, the runner never trains or reads files."""

from __future__ import annotations

import numpy as np

from interp_harness.function_store.catalog import Catalog, CatalogOptions, GenConfig
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.models import Target
from interp_harness.function_store.numeric.mlp import load_torch_weights
from interp_harness.function_store.runtime import build_runner, prepare_target


def test_v1_mlp_weights_embedded_and_used(tmp_path, monkeypatch):
    t = Catalog().get("find-v1/numeric/f00000")
    prepared = prepare_target(t)
    w = prepared.hidden.spec["mlp"]["weights"]
    ref = load_torch_weights(str(data_path("find/numeric/mlp/f00000.pt")))
    assert np.array_equal(np.asarray(w["w1"], dtype=np.float32), ref.w1)
    # the prepared target survives JSON (the sandbox boundary) and needs no data directory
    wire = Target.model_validate_json(prepared.model_dump_json())
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    wire.hidden.spec["mlp"].pop("weights_path", None)
    out = build_runner(wire).call(["0", "100"])
    assert [o.output for o in out] == [o.output for o in build_runner(t).call(["0", "100"])]


def test_gen_mlp_trained_before_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    cat = Catalog(CatalogOptions(gen=GenConfig(n_numeric=40, mlp_epochs=3)))
    t = next(t for t in cat.list(dataset="find-gen", family="numeric") if t.variant == "mlp")
    prepared = Target.model_validate_json(prepare_target(t).model_dump_json())
    assert len(prepared.hidden.spec["mlp"]["weights"]["b1"]) == 64
    # with the cache gone, the runner still answers from the inline weights (no training)
    for f in tmp_path.rglob("*.npz"):
        f.unlink()
    out = build_runner(prepared).call(["1.5"])
    assert out[0].error is None and float(out[0].output) == float(out[0].output)
    assert not list(tmp_path.rglob("*.npz"))
