"""The run page's plot of success by inputs used renders whatever the outcomes (issue 38 item 8:
a run whose 3 numeric episodes all failed answered 500, `'yerr' must not contain negative
values`): error bars are never negative, even for an interval that misses its estimate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import fuzz_settings

from interp_harness.evaluator.report import QueryRow, wilson
from interp_harness.harness.web.plots import queries_svg

BINS = ("0-64", "65-256", "257-1024", ">1024")


@st.composite
def wilson_rows(draw: st.DrawFn) -> list[QueryRow]:
    """Rows as the report makes them: k successes of n scored episodes, with their interval."""
    rows = []
    for agent in draw(st.lists(st.sampled_from("ab"), min_size=1, max_size=2, unique=True)):
        for b in draw(st.lists(st.sampled_from(BINS), min_size=1, max_size=4, unique=True)):
            n = draw(st.integers(1, 10_000))
            k = draw(st.integers(0, n))
            lo, hi = wilson(k, n)  # type: ignore[misc]
            rows.append(QueryRow(agent=agent, bin=b, episodes=n, success=k / n,
                                 ci_low=lo, ci_high=hi))  # fmt: skip
    return rows


unit = st.floats(0.0, 1.0)


@st.composite
def any_rows(draw: st.DrawFn) -> list[QueryRow]:
    """Any rate with any interval (or none), also one that does not contain it."""
    return [
        QueryRow(
            agent="a",
            bin=b,
            episodes=1,
            success=draw(unit),
            ci_low=draw(st.none() | unit),
            ci_high=draw(st.none() | unit),
        )  # fmt: skip
        for b in draw(st.lists(st.sampled_from(BINS), min_size=1, max_size=4, unique=True))
    ]


def test_all_failed_renders() -> None:
    lo, hi = wilson(0, 3)  # type: ignore[misc]
    svg = queries_svg([QueryRow(agent="a", bin="0-64", episodes=3, success=0.0,
                                ci_low=lo, ci_high=hi)])  # fmt: skip
    assert svg.startswith("<svg") and 'id="queries-a"' in svg


@given(wilson_rows())
@fuzz_settings(40)
def test_report_rows_render(rows: list[QueryRow]) -> None:
    for r in rows:
        assert r.ci_low <= r.success <= r.ci_high  # type: ignore[operator]
    assert queries_svg(rows).startswith("<svg")


@pytest.mark.slow
@given(any_rows())
@fuzz_settings(40)
def test_any_interval_renders(rows: list[QueryRow]) -> None:
    assert queries_svg(rows).startswith("<svg")
