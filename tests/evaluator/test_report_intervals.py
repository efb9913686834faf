"""Report intervals contain their estimate (issue 38 item 8): the Wilson interval of 0 successes
out of 3 began at 5.6e-17, above the rate 0.0, and the run page's error bar under it came out
negative (matplotlib refused it: a 500)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support import fuzz_settings

from interp_harness.evaluator.report import wilson


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 10_000))
    return draw(st.integers(0, n)), n


@given(outcomes())
@fuzz_settings(500)
def test_wilson_contains_the_rate(kn: tuple[int, int]) -> None:
    k, n = kn
    ci = wilson(k, n)
    assert ci is not None
    lo, hi = ci
    assert 0.0 <= lo <= k / n <= hi <= 1.0, (k, n, ci)


def test_all_failed_and_all_succeeded_end_at_the_bounds() -> None:
    assert wilson(0, 3)[0] == 0.0  # type: ignore[index]
    assert wilson(3, 3)[1] == 1.0  # type: ignore[index]
    assert wilson(0, 0) is None
