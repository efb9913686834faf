"""find-v1 numeric values against hand formulas (FIND's `math_functions.py`, `write_source_code.py`)
for every family and variant, with parameters read from the released data.json."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from support import numeric_reference as ref

from interp_harness.function_store.runtime import RuntimeContext, call_target

FAMILIES = [
    "linear",
    "polynomial",
    "rational",
    "absolute",
    "root",
    "reciprocal",
    "logarithm",
    "step",
    "rectangle",
    "relu",
    "tanh",
    "sin",
    "cos",
    "gaussian",
    "square_wave",
    "constant",
    "sum_two",
    "multiply_two",
]


def _by_variant(variant: str) -> dict[str, list[str]]:
    files = {
        "clean": "function_code.py",
        "noised": "noised_function_code.py",
        "corrupted": "corrupted_function_code.py",
    }
    out: dict[str, list[str]] = defaultdict(list)
    for fdir, rec in sorted(ref.records().items()):
        if ref.served_files()[fdir] == files[variant]:
            out[ref.family_key(rec)].append(fdir)
    return out


def _close(got: float, want: float, rel: float = 1e-9) -> bool:
    return math.isclose(got, want, rel_tol=rel, abs_tol=rel * 10)


def _call(target, xs, seed=0):
    outs = call_target(target, [repr(x) for x in xs], RuntimeContext(seed=seed))
    return [o.output for o in outs]


@pytest.mark.parametrize("family", FAMILIES)
def test_clean_every_function_matches_formula(family, v1_targets):
    fdirs = _by_variant("clean")[family]
    assert len(fdirs) >= 2
    for fdir in fdirs:
        rec = ref.records()[fdir]
        xs = ref.probe_points(rec)
        for x, text in zip(xs, _call(v1_targets[fdir], xs), strict=True):
            want = ref.function(rec, x, release=True)
            assert _close(float(text), want), (fdir, rec["name"], x, text, want)


@pytest.mark.parametrize("family", FAMILIES)
def test_noised_residual_is_one_draw_of_the_named_noise(family, v1_targets):
    fdirs = _by_variant("noised")[family]
    assert len(fdirs) >= 2
    for fdir in fdirs:
        rec = ref.records()[fdir]
        xs = [x for x in ref.probe_points(rec) if abs(x) <= 10] or ref.probe_points(rec)[:3]
        for x, text in zip(xs, _call(v1_targets[fdir], xs, seed=len(fdir)), strict=True):
            want = ref.function(rec, x, release=True, reused=True)
            r = complex(text).real - want  # noise is added to the value
            tol = 1e-8 * max(1.0, abs(want))
            kind = rec["noise_type"]
            if kind == "uniform":
                assert -1 - tol <= r <= 1 + tol, (fdir, x, r)
            elif kind == "normal":
                assert abs(r) < 6, (fdir, x, r)
            else:  # poisson(lam=1): a non-negative integer (mean +1 in the release)
                assert r > -tol and abs(r - round(r)) < max(tol, 1e-6), (fdir, x, r)


def _corruption_points(rec):
    lo, hi = rec["domain"]
    b = rec["corruption_params"]["boundary"]
    kind = rec["corruption_type"]
    grid = [float(v) for v in np.linspace(-127.5, 127.5, 103)]
    if kind == "interval_inside":
        grid += [(b[0] + b[1]) / 2]
        bad = [x for x in grid if b[0] < x < b[1]]
    elif kind == "interval_smaller":
        bad = [x for x in grid if x <= b[0]]
    else:
        bad = [x for x in grid if x >= b[0]]
    good = [x for x in grid if x not in bad and lo <= x <= hi and not ref.fragile(rec, x)]
    return bad, good


@pytest.mark.parametrize("family", FAMILIES)
def test_corrupted_noise_inside_formula_outside(family, v1_targets):
    fdirs = _by_variant("corrupted")[family]
    assert len(fdirs) >= 2
    checked_bad = 0
    for fdir in fdirs:
        rec = ref.records()[fdir]
        mean = rec["corruption_params"]["std"]  # stored as "std", used as the mean
        bad, good = _corruption_points(rec)
        for x, text in zip(bad, _call(v1_targets[fdir], bad), strict=True):
            assert abs(float(text) - mean) < 0.6 + 1e-9 * abs(mean), (fdir, x, text, mean)
            checked_bad += 1
        for x, text in zip(good, _call(v1_targets[fdir], good), strict=True):
            want = ref.function(rec, x, release=True, reused=True)
            assert _close(float(text), want, 1e-8), (fdir, rec["name"], x, text, want)
    assert checked_bad > 0


def test_f00473_corrupted_linear(v1_targets):
    t = v1_targets["f00473"]
    assert t.variant == "corrupted"
    a, b = 92.3, 103.42239660278833
    # outside (a, b): exactly -1.5*x - 5.0, printed as Python prints a float
    outs = call_target(t, ["0", "10", "-100", "92.3", "103.5", "120"])
    assert [o.output for o in outs] == ["-5.0", "-20.0", "145.0", "-143.45", "-160.25", "-185.0"]
    # inside: N(-5.0, 0.1) draws, fresh on every call
    inside = [float(call_target(t, ["95"])[0].output) for _ in range(200)]
    assert all(abs(v + 5.0) < 0.6 for v in inside)
    assert abs(np.mean(inside) + 5.0) < 0.05
    assert 0.05 < np.std(inside) < 0.15
    assert len(set(inside)) == len(inside)
    assert a < 100 < b and abs(float(call_target(t, ["100"])[0].output) + 5.0) < 0.6
    assert (
        "np.where((x > 92.3) & (x < 103.42239660278833), np.random.normal("
        "loc=-5.000000000000015,scale=0.1, size=x.shape), -1.5*x + -5.0)" in t.hidden.code
    )


def test_absolute_drops_bias_in_release(v1_targets):
    fdirs = [
        d
        for d, r in ref.records().items()
        if ref.split_name(r) == ["absolute"] and ref.served_files()[d] == "function_code.py"
    ]
    for fdir in fdirs[:5]:
        a, b = ref.records()[fdir]["params"]
        assert b != 0
        out = call_target(v1_targets[fdir], ["-7", "3"])
        assert float(out[0].output) == a * 7 and float(out[1].output) == a * 3  # no + b


def test_composed_square_wave_is_a_sign_step(v1_targets):
    # f00005-like composed square waves lose their sine: rectangle + np.where(x > 0, 1, -1)
    cases = [
        d
        for d, r in ref.records().items()
        if "square_wave" in ref.split_name(r)[:2]
        and len(ref.split_name(r)) == 3
        and ref.served_files()[d] == "function_code.py"
    ]
    assert len(cases) >= 2
    for fdir in cases:
        rec = ref.records()[fdir]
        n1, n2, op = ref.split_name(rec)
        for x in (-50.25, -0.5, 0.5, 33.75):
            if ref.fragile(rec, x):
                continue
            got = float(call_target(v1_targets[fdir], [repr(x)])[0].output)
            a = ref.atomic(n1, rec["params"][0], x, release=True, collapsed=True)
            b = ref.atomic(n2, rec["params"][1], x, release=True, collapsed=True)
            want = a + b if op == "sum_two" else a * b
            assert _close(got, want), (fdir, x, got, want)
        assert "np.sin" not in v1_targets[fdir].hidden.code


def test_atomic_clean_square_wave_keeps_its_sine_but_noised_does_not(v1_targets):
    by = {v: _by_variant(v)["square_wave"] for v in ("clean", "noised")}
    clean = ref.records()[by["clean"][0]]
    period, shift = clean["params"]
    xs = [shift + period * 0.75, shift + period * 0.25]  # sine < 0, then > 0
    assert [o.output for o in call_target(v1_targets[by["clean"][0]], [repr(x) for x in xs])] == [
        "-1",
        "1",
    ]
    noised = v1_targets[by["noised"][0]]
    assert "np.sin" not in noised.hidden.code and "np.where(x > 0, 1, -1) + " in noised.hidden.code


def test_poisson_noise_has_mean_one_and_one_draw_per_call(v1_targets):
    fdir = next(
        d for d in _by_variant("noised")["linear"] if ref.records()[d]["noise_type"] == "poisson"
    )
    rec = ref.records()[fdir]
    base = ref.function(rec, 2.0, release=True)
    t = v1_targets[fdir]
    draws = [float(call_target(t, ["2"])[0].output) - base for _ in range(3000)]
    ints = [round(d) for d in draws]
    assert all(abs(d - i) < 1e-9 for d, i in zip(draws, ints, strict=True))
    assert abs(np.mean(ints) - 1.0) < 0.08  # Poisson(1): mean 1, sd of the mean ~0.018
    assert abs(np.var(ints) - 1.0) < 0.15
    # one call with repeated inputs: each input gets its own draw
    many = [round(float(o.output) - base) for o in call_target(t, ["2"] * 400)]
    assert len(set(many)) > 2


def test_seeded_context_is_deterministic(v1_targets):
    t = v1_targets["f00473"]
    a = call_target(t, ["95", "96"], RuntimeContext(seed=7))
    b = call_target(t, ["95", "96"], RuntimeContext(seed=7))
    c = call_target(t, ["95", "96"], RuntimeContext(seed=8))
    assert a == b and a != c
