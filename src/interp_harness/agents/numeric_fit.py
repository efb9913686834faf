"""Fitting candidate function families to (x, y) samples, for the scripted numeric agent.

Each family is fitted by least squares (grid searches for the non-linear parameters, then
scipy's curve_fit to polish them) and the families are ranked by BIC, so a more complex family
wins only when it explains the samples markedly better. A corrupted interval (FIND replaces f by
N(mean, 0.1) on a stretch of the domain, in its `sample_corruption`) is searched for as a contiguous
stretch that the family misses, or that is suspiciously flat; the corrupted model predicts a
constant there and pays three extra parameters for it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Predict = Callable[[np.ndarray], np.ndarray]


def num(v: float) -> str:
    """A literal for generated code and descriptions; values within 1e-6 of one decimal (FIND
    draws its parameters rounded to 0.1) are written that way."""
    v = float(v)
    r = round(v, 1)
    if abs(v - r) <= 1e-6 * max(1.0, abs(v)):
        v = r
    if v == 0:
        return "0.0"
    return format(v, ".10g")


@dataclass
class Fit:
    family: str
    k: int  # free parameters, for BIC
    predict: Predict  # real predictions on an array
    expr: str  # python expression in `x` (numpy as `np`), the body of f
    description: str
    predict_complex: Predict | None = None  # for families defined on complex values (root)
    rss: float = math.inf
    bic: float = math.inf
    corruption: tuple[float, float, float] | None = (
        None  # (lo, hi, value): f = value for lo < x < hi
    )
    extra: dict[str, float] = field(default_factory=dict)


def _lstsq(cols: list[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, float]:
    a = np.column_stack(cols)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    r = y - a @ coef
    return coef, float(r @ r)


def _quiet_curve_fit(
    fn: Callable, x: np.ndarray, y: np.ndarray, p0: list[float]
) -> np.ndarray | None:
    # scipy loads at the first fit, not with the agent's class (`harness agents list`)
    from scipy.optimize import OptimizeWarning, curve_fit

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            popt, _ = curve_fit(fn, x, y, p0=p0, maxfev=4000)
        return popt if np.all(np.isfinite(popt)) else None
    except (RuntimeError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------- families (x, y) -> Fit | None


def fit_constant(x: np.ndarray, y: np.ndarray) -> Fit:
    c = float(np.mean(y))
    return Fit(
        "constant",
        1,
        lambda t: np.full_like(t, c, dtype=float),
        f"{num(c)} * np.ones_like(x)",
        f"f(x) is constant: it returns {num(c)} for every input.",
    )


def fit_linear(x: np.ndarray, y: np.ndarray) -> Fit:
    (m, b), _ = _lstsq([x, np.ones_like(x)], y)
    return Fit(
        "linear",
        2,
        lambda t: m * t + b,
        f"{num(m)} * x + {num(b)}",
        f"f(x) is a linear function of x with slope {num(m)} and intercept {num(b)}: "
        f"f(x) = {num(m)}*x + {num(b)}.",
    )


def _poly_expr(coef: np.ndarray) -> str:
    """Descending powers, as FIND writes polynomials: `-4.5 * x**2 + 0.4 * x + 3.9`."""
    terms = [
        num(c) if i == 0 else f"{num(c)} * x" if i == 1 else f"{num(c)} * x**{i}"
        for i, c in enumerate(coef)
    ]
    return " + ".join(terms[::-1])


def fit_polynomial(deg: int) -> Callable[[np.ndarray, np.ndarray], Fit | None]:
    def fit(x: np.ndarray, y: np.ndarray) -> Fit | None:
        if len(x) <= deg + 1:
            return None
        coef = np.polynomial.Polynomial.fit(x, y, deg).convert().coef  # ascending powers
        expr = _poly_expr(coef)
        return Fit(
            f"polynomial{deg}",
            deg + 1,
            lambda t: np.polynomial.polynomial.polyval(t, coef),
            expr,
            f"f(x) is a polynomial of degree {deg}: f(x) = {expr.replace(' * ', '*')}.",
        )

    return fit


def _scaled(
    x: np.ndarray,
    y: np.ndarray,
    kind: str,
    g: Callable[[np.ndarray], np.ndarray],
    expr: str,
    words: str,
    g_complex: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Fit:
    """f(x) = a*g(x) + b by least squares; `expr` and `words` are formats of `{a}` and `{b}`;
    `g_complex`: g on complex values, for a family defined there (root)."""
    (a, b), _ = _lstsq([g(x), np.ones_like(x)], y)
    ab = {"a": num(a), "b": num(b)}
    return Fit(
        kind,
        2,
        lambda t: a * g(t) + b,
        expr.format(**ab),
        words.format(**ab),
        predict_complex=None if g_complex is None else (lambda t: a * g_complex(t) + b),
    )


def fit_absolute(x: np.ndarray, y: np.ndarray) -> Fit:
    words = "f(x) scales the absolute value of x: f(x) = {a}*|x| + {b}."
    return _scaled(x, y, "absolute", np.abs, "{a} * np.abs(x) + {b}", words)


def fit_relu(x: np.ndarray, y: np.ndarray) -> Fit:
    (a, c, b), _ = _lstsq([np.maximum(x, 0), np.minimum(x, 0), np.ones_like(x)], y)
    leak = c / a if abs(a) > 1e-12 else 0.0
    return Fit(
        "relu",
        3,
        lambda t: np.where(t > 0, a * t, c * t) + b,
        f"np.where(x > 0, {num(a)} * x, {num(c)} * x) + {num(b)}",
        f"f(x) is a (leaky) ReLU-like piecewise linear function with a kink at x = 0: slope {num(a)} "
        f"for x > 0 and slope {num(c)} for x < 0 (leak {num(leak)} of the positive slope), plus {num(b)}.",
    )


def _thresholds(x: np.ndarray) -> np.ndarray:
    u = np.unique(x)
    return (u[1:] + u[:-1]) / 2


def _best_indicator(ind: np.ndarray, y: np.ndarray) -> tuple[int, float, float, float]:
    """Best column of a (n_points, n_cand) 0/1 matrix for y = a*ind + b: (index, a, b, rss)."""
    n = len(y)
    s1 = ind.sum(axis=0)
    sy = ind.T @ y
    ybar = y.mean()
    # two-group means: inside mean and outside mean
    with np.errstate(divide="ignore", invalid="ignore"):
        m_in = sy / s1
        m_out = (y.sum() - sy) / (n - s1)
        gain = s1 * (m_in - ybar) ** 2 + (n - s1) * (m_out - ybar) ** 2
    gain = np.where((s1 > 0) & (s1 < n), gain, -np.inf)
    j = int(np.argmax(gain))
    a = float(m_in[j] - m_out[j])
    b = float(m_out[j])
    r = y - (a * ind[:, j] + b)
    return j, a, b, float(r @ r)


def fit_step(x: np.ndarray, y: np.ndarray) -> Fit | None:
    ts = _thresholds(x)
    if len(ts) == 0:
        return None
    j, a, b, _ = _best_indicator((x[:, None] > ts[None, :]).astype(float), y)
    t = float(ts[j])
    t = 0.0 if abs(t) <= 0.5 and not np.any((x > min(t, 0)) & (x < max(t, 0))) else t
    return Fit(
        "step",
        3,
        lambda u: np.where(u > t, a + b, b),
        f"np.where(x > {num(t)}, {num(a + b)}, {num(b)})",
        f"f(x) is a step function: it returns {num(b)} for x < {num(t)} and {num(a + b)} for x > {num(t)}.",
    )


def fit_rectangle(x: np.ndarray, y: np.ndarray) -> Fit | None:
    hs = _thresholds(np.abs(x))
    if len(hs) == 0:
        return None
    j, a, b, _ = _best_indicator((np.abs(x)[:, None] <= hs[None, :]).astype(float), y)
    h = float(hs[j])
    return Fit(
        "rectangle",
        3,
        lambda u: np.where(np.abs(u) <= h, a + b, b),
        f"np.where(np.abs(x) <= {num(h)}, {num(a + b)}, {num(b)})",
        f"f(x) is a rectangle (box) function: it returns {num(a + b)} when |x| <= {num(h)} "
        f"(a window of width {num(2 * h)} centred at 0) and {num(b)} elsewhere.",
    )


def fit_square_wave(x: np.ndarray, y: np.ndarray) -> Fit | None:
    periods = np.round(np.arange(0.5, 12.0001, 0.1), 1)
    shifts = np.round(np.arange(-6.0, 6.0001, 0.1), 1)
    best = (math.inf, 0.0, 0.0, 0.0, 0.0)
    for p in periods:
        ind = (np.sin((x[:, None] - shifts[None, :]) * (2 * np.pi / p)) > 0).astype(float)
        j, a, b, rss = _best_indicator(ind, y)
        if rss < best[0]:
            best = (rss, float(p), float(shifts[j]), a, b)
    _, p, s, a, b = best
    if a == 0:
        return None
    hi, lo = a + b, b
    return Fit(
        "square_wave",
        4,
        lambda u: np.where(np.sin((u - s) * (2 * np.pi / p)) > 0, hi, lo),
        f"np.where(np.sin((x - {num(s)}) * (2 * np.pi / {num(p)})) > 0, {num(hi)}, {num(lo)})",
        f"f(x) is a square wave with period {num(p)}, alternating between {num(hi)} and {num(lo)} "
        f"(high while sin(2*pi*(x - {num(s)})/{num(p)}) > 0).",
    )


def _periodogram(x: np.ndarray, yc: np.ndarray, omegas: np.ndarray) -> np.ndarray:
    """Energy of y captured by sin and cos at each angular frequency (a plain Lomb-Scargle)."""
    out = np.empty(len(omegas))
    for i in range(0, len(omegas), 1024):
        w = omegas[i : i + 1024, None] * x[None, :]
        s, c = np.sin(w), np.cos(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[i : i + 1024] = (s @ yc) ** 2 / (s * s).sum(axis=1) + (c @ yc) ** 2 / (c * c).sum(
                axis=1
            )
    return np.nan_to_num(out)


def fit_sinusoid(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if len(x) < 8 or np.ptp(y) == 0:
        return None
    yc = y - y.mean()
    coarse = np.arange(0.4, 70.0, 0.01)
    power = _periodogram(x, yc, coarse)
    peaks = coarse[np.argsort(power)[::-1][:5]]
    fine = np.concatenate([np.arange(w - 0.01, w + 0.01, 0.0005) for w in peaks])
    fpower = _periodogram(x, yc, fine)
    omegas, power = np.concatenate([coarse, fine]), np.concatenate([power, fpower])
    best: tuple[float, np.ndarray] | None = None
    for idx in np.argsort(power)[::-1][:5]:
        w0 = float(omegas[idx])
        (s, c, d), _ = _lstsq([np.sin(w0 * x), np.cos(w0 * x), np.ones_like(x)], y)
        amp, phi = float(np.hypot(s, c)), float(np.arctan2(c, s))
        popt = _quiet_curve_fit(
            lambda t, A, w, ph, dd: A * np.sin(w * t + ph) + dd, x, y, [amp, w0, phi, d]
        )
        if popt is None:
            continue
        r = y - (popt[0] * np.sin(popt[1] * x + popt[2]) + popt[3])
        rss = float(r @ r)
        if best is None or rss < best[0]:
            best = (rss, popt)
    if best is None:
        return None
    A, w, ph, d = (float(v) for v in best[1])
    if A < 0:
        A, ph = -A, ph + np.pi
    ph = math.remainder(ph, 2 * np.pi)
    period = 2 * np.pi / w
    return Fit(
        "sinusoid",
        4,
        lambda t: A * np.sin(w * t + ph) + d,
        f"{num(A)} * np.sin({num(w)} * x + {num(ph)}) + {num(d)}",
        f"f(x) is a sinusoid: amplitude {num(A)}, period {num(period)} (angular frequency {num(w)}), "
        f"phase {num(ph)}, offset {num(d)}: f(x) = {num(A)}*sin({num(w)}*x + {num(ph)}) + {num(d)}.",
    )


def _best_shape(cols: np.ndarray, yc: np.ndarray) -> tuple[int, float]:
    """Column of a (n_points, n_cand) matrix that best explains the centred `yc` as a*col + b:
    (index, explained sum of squares)."""
    cm = cols - cols.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = (cm.T @ yc) ** 2 / (cm * cm).sum(axis=0)
    gain = np.nan_to_num(gain, nan=-1.0)
    j = int(np.argmax(gain))
    return j, float(gain[j])


def _best_on_grid(
    x: np.ndarray,
    y: np.ndarray,
    outer: np.ndarray,
    inner: np.ndarray,
    shape: Callable[[np.ndarray, float], np.ndarray],
) -> tuple[float, float] | None:
    """(o, i) of the grid `outer` x `inner` whose column shape(x - i, o) explains the most of y
    (the first such, scanning `outer`); None when the grid is empty."""
    best: tuple[float, float, float] | None = None
    yc = y - y.mean()
    for o in outer:
        j, gain = _best_shape(shape(x[:, None] - inner[None, :], o), yc)
        if best is None or gain > best[0]:
            best = (gain, float(o), float(inner[j]))
    return None if best is None else (best[1], best[2])


def fit_tanh(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if len(x) < 8:
        return None
    widths = 2 * np.pi / np.arange(0.1, 12.6, 0.2)
    centres = np.arange(-10.0, 10.0001, 0.1)
    found = _best_on_grid(x, y, widths, centres, lambda d, w: np.tanh(w * d))
    if found is None:
        return None
    w0, c0 = found
    (a0, d0), _ = _lstsq([np.tanh(w0 * (x - c0)), np.ones_like(x)], y)
    popt = _quiet_curve_fit(
        lambda t, A, w, c, d: A * np.tanh(w * (t - c)) + d, x, y, [a0, w0, c0, d0]
    )
    A, w, c, d = (float(v) for v in (popt if popt is not None else (a0, w0, c0, d0)))
    return Fit(
        "tanh",
        4,
        lambda t: A * np.tanh(w * (t - c)) + d,
        f"{num(A)} * np.tanh({num(w)} * (x - {num(c)})) + {num(d)}",
        f"f(x) is a scaled hyperbolic tangent, a smooth step centred at x = {num(c)}: "
        f"f(x) = {num(A)}*tanh({num(w)}*(x - {num(c)})) + {num(d)}; it goes from {num(d - A)} to {num(d + A)}.",
    )


def fit_gaussian(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if len(x) < 8:
        return None
    sds = np.arange(0.5, 16.01, 0.5)
    means = np.arange(-64.0, 64.0001, 0.5)
    found = _best_on_grid(x, y, sds, means, lambda d, s: np.exp(-0.5 * (d / s) ** 2))
    if found is None:
        return None
    s0, m0 = found
    (a0, b0), _ = _lstsq([np.exp(-0.5 * ((x - m0) / s0) ** 2), np.ones_like(x)], y)
    popt = _quiet_curve_fit(
        lambda t, a, m, s, b: a * np.exp(-0.5 * ((t - m) / s) ** 2) + b, x, y, [a0, m0, s0, b0]
    )
    a, m, s, b = (float(v) for v in (popt if popt is not None else (a0, m0, s0, b0)))
    s = abs(s)
    return Fit(
        "gaussian",
        4,
        lambda t: a * np.exp(-0.5 * ((t - m) / s) ** 2) + b,
        f"{num(a)} * np.exp(-0.5 * ((x - {num(m)}) / {num(s)}) ** 2) + {num(b)}",
        f"f(x) is a Gaussian bump centred at x = {num(m)} with standard deviation {num(s)} and peak "
        f"height {num(a)} above a baseline of {num(b)} (a normal density would have peak "
        f"{num(1 / (s * math.sqrt(2 * math.pi)))}).",
    )


def fit_reciprocal(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if np.any(x == 0):
        return None
    (c, b), _ = _lstsq([1 / x, np.ones_like(x)], y)
    return Fit(
        "reciprocal",
        2,
        lambda t: c / t + b,
        f"{num(c)} / x + {num(b)}",
        f"f(x) is a reciprocal function: f(x) = {num(c)}/x + {num(b)}"
        + (f", i.e. 1/({num(1 / c)}*x)" if abs(c) > 1e-12 else "")
        + "; it is undefined at x = 0.",
    )


def fit_logarithm(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if np.any(x <= 0):
        return None
    words = (
        "f(x) is logarithmic: f(x) = {a}*ln(x) + {b}, defined for x > 0 (negative inputs give nan)."
    )
    return _scaled(x, y, "logarithm", np.log, "{a} * np.log(x) + {b}", words)


def fit_root(x: np.ndarray, y: np.ndarray) -> Fit | None:
    if np.any(x < 0):
        return None
    words = (
        "f(x) is a square-root function: f(x) = {a}*sqrt(x) + {b}; for negative x the square "
        "root is imaginary and f returns a complex number."
    )
    return _scaled(
        x, y, "root", np.sqrt, "{a} * (x ** 0.5) + {b}", words, lambda t: t.astype(complex) ** 0.5
    )


def _rounding(kind: str) -> Callable[[np.ndarray, np.ndarray], Fit]:
    op = {"ceil": np.ceil, "floor": np.floor}[kind]

    def fit(x: np.ndarray, y: np.ndarray) -> Fit:
        words = (
            f"f(x) rounds x {'up' if kind == 'ceil' else 'down'} to an integer ({kind}), then "
            f"scales it: f(x) = {{a}}*{kind}(x) + {{b}}."
        )
        return _scaled(x, y, kind, op, f"{{a}} * np.{kind}(x) + {{b}}", words)

    return fit


def fit_piecewise_poly(deg: int) -> Callable[[np.ndarray, np.ndarray], Fit | None]:
    """Separate polynomials left and right of 0: sums and products of FIND's compose-only families
    (linear, polynomial, step, relu, constant) are of this kind."""

    def fit(x: np.ndarray, y: np.ndarray) -> Fit | None:
        left, right = x < 0, x > 0
        if left.sum() <= deg + 1 or right.sum() <= deg + 1:
            return None
        cl = np.polynomial.Polynomial.fit(x[left], y[left], deg).convert().coef
        cr = np.polynomial.Polynomial.fit(x[right], y[right], deg).convert().coef
        pl, pr = _poly_expr(cl), _poly_expr(cr)
        pv = np.polynomial.polynomial.polyval
        return Fit(
            f"piecewise{deg}",
            2 * (deg + 1),
            lambda t: np.where(t > 0, pv(t, cr), pv(t, cl)),
            f"np.where(x > 0, {pr}, {pl})",
            f"f(x) is piecewise: for x > 0 it follows {pr.replace(' * ', '*')}, and for x < 0 it "
            f"follows {pl.replace(' * ', '*')}.",
        )

    return fit


FAMILIES: list[Callable[[np.ndarray, np.ndarray], Fit | None]] = [
    fit_constant, fit_linear, fit_polynomial(2), fit_polynomial(3), fit_polynomial(4), fit_polynomial(5),
    fit_absolute, fit_relu, fit_step, fit_rectangle, fit_reciprocal, fit_logarithm, fit_root,
    _rounding("ceil"), _rounding("floor"), fit_sinusoid, fit_tanh, fit_gaussian, fit_square_wave,
    fit_piecewise_poly(1), fit_piecewise_poly(2), fit_piecewise_poly(3),
]  # fmt: skip


SLOW = {
    fit_sinusoid,
    fit_tanh,
    fit_gaussian,
    fit_square_wave,
}  # grid searches: skipped when not needed

# ---------------------------------------------------------------- scoring and corruption


def _score(
    fit: Fit, x: np.ndarray, y: np.ndarray, cplx: list[tuple[float, complex]], floor: float
) -> Fit:
    with np.errstate(all="ignore"):
        pred = fit.predict(x)
        if fit.corruption is not None:
            lo, hi, v = fit.corruption
            pred = np.where((x > lo) & (x < hi), v, pred)
        r = np.abs(y - pred) ** 2
        rss = float(np.sum(np.where(np.isfinite(r), r, 1e300)))
        if cplx:
            cx = np.array([c[0] for c in cplx])
            cy = np.array([c[1] for c in cplx])
            cp = fit.predict_complex(cx) if fit.predict_complex else fit.predict(cx).astype(complex)
            rc = np.abs(cy - cp) ** 2
            rss += float(np.sum(np.where(np.isfinite(rc), rc, 1e300)))
    n = len(x) + len(cplx)
    k = fit.k + (3 if fit.corruption is not None else 0)
    fit.rss = rss
    fit.bic = n * math.log(min(rss, 1e300) / n + floor) + k * math.log(n)
    return fit


def _runs(mask: np.ndarray, max_gap: int = 1) -> list[tuple[int, int]]:
    """Index runs [i, j] where mask holds, bridging gaps of up to `max_gap` points."""
    runs: list[tuple[int, int]] = []
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return runs
    start = prev = int(idx[0])
    for i in idx[1:]:
        i = int(i)
        if i - prev > max_gap + 1:
            runs.append((start, prev))
            start = i
        prev = i
    runs.append((start, prev))
    return runs


def _interval(xs: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """Bounds halfway to the neighbouring samples; open-ended at the edges of the sampled range."""
    lo = -math.inf if i == 0 else (xs[i - 1] + xs[i]) / 2
    hi = math.inf if j == len(xs) - 1 else (xs[j] + xs[j + 1]) / 2
    return float(lo), float(hi)


def candidate_intervals(
    xs: np.ndarray, ys: np.ndarray, fits: list[Fit]
) -> list[tuple[float, float]]:
    """Stretches that may be corrupted, from sorted samples: runs of large residuals under the best
    plain fits, and long flat runs (FIND's corruption is N(mean, 0.1): nearly constant)."""
    n = len(xs)
    flat_runs: list[tuple[int, int]] = []
    start, total = 0, float(ys[0]) if n else 0.0
    for j in range(1, n + 1):  # greedy segments whose values stay within 0.5 of their mean
        if j < n and abs(float(ys[j]) - total / (j - start)) < 0.5:
            total += float(ys[j])
            continue
        i, k = start, j - 1
        # FIND's corrupted stretches are at least 5 wide (inside) or reach an end of the range
        if (
            k - i + 1 >= 5
            and xs[k] - xs[i] >= 3
            and k - i + 1 <= 0.8 * n
            and float(np.std(ys[i : k + 1])) < 0.35
        ):
            flat_runs.append((i, k))
        if j < n:
            start, total = j, float(ys[j])
    resid_runs: list[tuple[int, int]] = []
    for fit in fits:
        with np.errstate(all="ignore"):
            r = np.abs(ys - fit.predict(xs))
        r = np.where(np.isfinite(r), r, np.inf)
        med = float(np.median(r))
        mad = 1.4826 * float(np.median(np.abs(r - med)))
        thr = max(med + 6 * mad, 1e-6 * (float(np.std(ys)) + 1e-9))
        resid_runs += [(i, j) for i, j in _runs(r > thr) if 3 <= j - i + 1 <= 0.8 * n]
    out: list[tuple[float, float]] = []
    # flat stretches first (FIND's signature), then the longest residual stretches
    for i, j in sorted(flat_runs, key=lambda r: xs[r[0]] - xs[r[1]]) + sorted(
        resid_runs, key=lambda r: r[0] - r[1]
    ):
        iv = _interval(xs, i, j)
        if iv not in out:
            out.append(iv)
    return out[:6]


def _with_corruption(
    family: Callable, x: np.ndarray, y: np.ndarray, lo: float, hi: float
) -> Fit | None:
    inside = (x > lo) & (x < hi)
    if inside.sum() < 2 or (~inside).sum() < 4:
        return None
    fit = family(x[~inside], y[~inside])
    if fit is None:
        return None
    fit.corruption = (lo, hi, float(np.mean(y[inside])))
    return fit


@dataclass
class Result:
    best: Fit
    ranked: list[Fit]


def fit_samples(
    xs: list[float], ys: list[float], cplx: list[tuple[float, complex]] | None = None
) -> Result:
    """Rank all families (and family + corrupted interval) on the samples by BIC."""
    cplx = cplx or []
    order = np.argsort(xs, kind="stable")
    x = np.asarray(xs, dtype=float)[order]
    y = np.asarray(ys, dtype=float)[order]
    if len(x) == 0:
        raise ValueError("no finite samples to fit")
    floor = 1e-12 * (float(np.mean(y * y)) + 1e-12)  # round-off: exact fits tie, fewer params win
    n = len(x) + len(cplx)
    exact = n * floor * 100  # an RSS this small is round-off: nothing left to explain
    fits: list[tuple[Callable, Fit]] = []
    for family in FAMILIES:
        if family in SLOW and fits and min(f.rss for _, f in fits) <= exact:
            continue  # a cheap family is already exact
        with np.errstate(all="ignore"):
            fit = family(x, y)
        if fit is not None:
            fits.append((family, _score(fit, x, y, cplx, floor)))
    fits.sort(key=lambda p: p[1].bic)
    ranked = [f for _, f in fits]
    if ranked[0].rss <= exact:
        return Result(best=ranked[0], ranked=ranked)
    simple = [f for f in ranked if f.family in ("linear", "polynomial2", "constant")][:2]
    intervals = candidate_intervals(x, y, ranked[:3] + simple)
    if intervals:
        # corrupted variants: every cheap family, and only the best-ranked slow one
        slow_best = next((fam for fam, _ in fits if fam in SLOW), None)
        for family, _ in fits:
            if family in SLOW and family is not slow_best:
                continue
            for lo, hi in intervals:
                with np.errstate(all="ignore"):
                    fit = _with_corruption(family, x, y, lo, hi)
                if fit is not None:
                    ranked.append(_score(fit, x, y, cplx, floor))
        ranked.sort(key=lambda f: f.bic)
    return Result(best=ranked[0], ranked=ranked)


def interp_cv_rss(xs: list[float], ys: list[float]) -> float:
    """Leave-one-out error of linear interpolation (each inner sample predicted from its
    neighbours): how well the interpolation fallback would do between samples."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    if len(x) < 3:
        return math.inf
    keep = np.concatenate([[True], np.diff(x) > 0])
    x, y = x[keep], y[keep]
    pred = y[:-2] + (y[2:] - y[:-2]) * (x[1:-1] - x[:-2]) / (x[2:] - x[:-2])
    r = y[1:-1] - pred
    # scaled to the full sample count so it compares with a family's RSS
    return float(r @ r) * len(x) / max(len(r), 1)
