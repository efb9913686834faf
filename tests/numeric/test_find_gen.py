"""find-gen numeric: determinism, proportions, fixed release quirks, lazy MLP training + cache."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from support import numeric_reference as ref

from interp_harness.function_store.catalog import Catalog, CatalogOptions, GenConfig
from interp_harness.function_store.numeric.find_gen import generate, train_mlp_for
from interp_harness.function_store.runtime import RuntimeContext, call_target


def _gen(seed: int, n: int = 200, **cfg) -> list:
    return generate(seed, GenConfig(n_numeric=n, **cfg))


def _dump(targets) -> str:
    return "[" + ",".join(t.model_dump_json() for t in targets) + "]"


def test_same_seed_same_bytes_different_seed_differs():
    assert _dump(_gen(3)) == _dump(_gen(3))
    assert _dump(_gen(3)) != _dump(_gen(4))


def test_catalog_source_and_ids():
    cat = Catalog(CatalogOptions(gen_seed=5, gen=GenConfig(n_numeric=30)))
    ts = cat.list(dataset="find-gen", family="numeric")
    assert [t.id for t in ts] == [f"find-gen/numeric/s5/f{i:05d}" for i in range(30)]
    assert cat.get("find-gen/numeric/s5/f00007").id.endswith("f00007")
    assert all(t.dataset == "find-gen" and t.available for t in ts)


def test_proportions():
    ts = _gen(1, n=1000)
    variants = Counter(t.variant for t in ts)
    assert variants == {"clean": 550, "noised": 150, "corrupted": 150, "mlp": 150}
    composed = sum(t.hidden.spec["function"]["name"] in ("sum_two", "multiply_two") for t in ts)
    assert composed == 150
    atomic = Counter(t.hidden.spec["function"]["name"] for t in ts) - Counter(
        {"sum_two": 10**6, "multiply_two": 10**6}
    )
    assert len(atomic) == 16 and min(atomic.values()) > 850 / 16 * 0.5
    noise = Counter(t.hidden.spec["noise"]["type"] for t in ts if t.variant == "noised")
    assert all(v > 25 for v in noise.values()) and len(noise) == 3
    kinds = Counter(t.hidden.spec["corruption"]["type"] for t in ts if t.variant == "corrupted")
    assert 50 <= kinds["interval_inside"] <= 100


def test_bad_proportions_are_rejected():
    with pytest.raises(ValueError, match="must not exceed 1"):
        _gen(0, n=10, numeric_p_mlp=0.5, numeric_p_noised=0.4, numeric_p_corrupted=0.3)


def _first(ts, name, variant):
    for t in ts:
        fn = t.hidden.spec["function"]
        if fn["name"] == name and t.variant == variant:
            return t, fn
    raise AssertionError(f"no {variant} {name} in the sample")


def test_absolute_keeps_its_bias():
    t, fn = _first(_gen(2, n=600), "absolute", "clean")
    a, b = fn["params"]
    outs = [float(o.output) for o in call_target(t, ["-7", "3"])]
    assert outs == [pytest.approx(a * 7 + b), pytest.approx(a * 3 + b)]
    assert -10 <= b <= 10 and -30 <= a <= 30


def test_square_wave_keeps_its_sine_when_noised_or_composed():
    ts = _gen(2, n=1500)
    t, fn = _first(ts, "square_wave", "noised")
    period, shift = fn["params"]
    # a positive x where the sine is < 0: the release's sign step would say +1 there
    k = max(0, math.ceil((1 - shift - 0.75 * period) / period))
    x = shift + (0.75 + k) * period
    assert x > 0
    out = float(call_target(t, [repr(x)], RuntimeContext(seed=0))[0].output)
    kind = t.hidden.spec["noise"]["type"]
    assert out < 0.5 if kind != "normal" else out < 5
    assert "np.sin" in t.hidden.code
    composed = [
        t
        for t in ts
        if t.hidden.spec["function"]["name"] in ("sum_two", "multiply_two")
        and any(op["name"] == "square_wave" for op in t.hidden.spec["function"]["operands"])
    ]
    assert composed and all("np.sin" in t.hidden.code for t in composed if t.variant != "mlp")


def test_composed_values_follow_the_formula():
    ts = [
        t
        for t in _gen(6, n=600)
        if t.variant == "clean" and t.hidden.spec["function"]["name"] in ("sum_two", "multiply_two")
    ]
    assert len(ts) >= 2
    for t in ts:
        fn = t.hidden.spec["function"]
        (o1, o2) = fn["operands"]
        for x in (-42.25, 3.5, 61.75):
            a = ref.atomic(o1["name"], o1["params"], x, release=False)
            b = ref.atomic(o2["name"], o2["params"], x, release=False)
            want = a + b if fn["name"] == "sum_two" else a * b
            got = float(call_target(t, [repr(x)])[0].output)
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), (fn, x)


def test_poisson_noise_is_centred():
    ts = [
        t
        for t in _gen(7, n=1500)
        if t.variant == "noised"
        and t.hidden.spec["noise"]["type"] == "poisson"
        and t.hidden.spec["function"]["name"] in ("linear", "constant", "absolute", "relu")
    ]
    assert ts
    t = ts[0]
    fn = t.hidden.spec["function"]
    base = ref.atomic(fn["name"], fn["params"], 2.0, release=False)
    draws = [float(o.output) - base for o in call_target(t, ["2"] * 3000)]
    assert abs(np.mean(draws)) < 0.08
    assert min(round(d) for d in draws) == -1


def test_corruption_mean_named_mean_and_equal_to_grid_mean():
    t, fn = _first(_gen(8, n=600), "linear", "corrupted")
    c = t.hidden.spec["corruption"]
    assert "std" not in c
    m, b = fn["params"]
    grid = np.linspace(-100, 100, 100)
    assert c["mean"] == pytest.approx(float(np.mean(m * grid + b)), abs=1e-9)


def test_reciprocal_at_zero_is_infinite_not_none():
    t, fn = _first(_gen(9, n=1500), "reciprocal", "clean")
    out = call_target(t, ["0"])[0].output
    assert out in ("inf", "-inf")


def test_mlp_trains_lazily_and_caches(tmp_path):
    ts = _gen(4, n=40, mlp_epochs=3)
    t = next(t for t in ts if t.variant == "mlp")
    assert t.hidden.spec["mlp"]["epochs"] == 3
    assert not list((tmp_path / "cache").glob("mlp/*.npz"))  # building the catalog trained nothing
    first = train_mlp_for(t)
    assert not first.cached and first.mse is not None and math.isfinite(first.mse)
    assert len(list((tmp_path / "cache").glob("mlp/*.npz"))) == 1
    again = train_mlp_for(t)
    assert again.cached
    assert np.array_equal(again.weights.w1, first.weights.w1)
    outs = call_target(t, ["1", "oops", "2"])
    assert outs[1].error and outs[0].output == str(first.weights.value(1.0))
