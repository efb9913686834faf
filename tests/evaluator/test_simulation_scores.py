"""Simulation scoring on hand-made cases: the 0-10 scale, the lexical simulator, the pooled
correlation (checked against the standard library's), the top-and-random sample, the error
states, and the simulator named in the report's rows."""

from __future__ import annotations

import asyncio
import statistics

import pytest
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import EpisodeSummary, ScoreResult
from interp_harness.evaluator.report import build_report, render_report
from interp_harness.evaluator.simulation.scale import normalise
from interp_harness.evaluator.simulation.scoring import (
    Excerpt,
    pearson,
    score_explanations,
    score_results,
    simulate,
    top_and_random,
)
from interp_harness.evaluator.simulation.simulator import LexicalSimulator, explanation_words


def _lexical(explanation: str, texts: list[list[str]]) -> list[list[float]]:
    return [list(x) for x in asyncio.run(LexicalSimulator().simulate(explanation, texts))]


def test_scale_clips_divides_by_the_max_and_rounds_half_up() -> None:
    # -0.2 -> 0; 0.5/2 -> 2.5 -> 3; 1/2 -> 5; the max -> 10; None stays unknown
    assert normalise([-0.2, 0.5, 1.0, 2.0, None], 2.0) == [0, 3, 5, 10, None]
    assert normalise([-1.0, 0.0], 0.0) == [0, 0]  # a unit that never fires


def test_lexical_simulator_quoted_strings_then_content_words() -> None:
    toks = ["The", " cat", " sat", " Dog", ",", " cats"]
    assert _lexical('fires on "cat", "dog"', [toks]) == [[0, 10, 0, 10, 0, 0]]
    # no quotes: the content words ("days", "week", "monday"), punctuation and case ignored
    assert explanation_words("days of the week such as Monday") == {"days", "week", "monday"}
    assert _lexical("days of the week, e.g. Monday", [["On", " Monday,", " the", " week"]]) == [
        [0, 10, 0, 10]
    ]
    assert _lexical('the years "2000" and "2001"', [[" in", " 2000", " 2001", " 2002"]]) == [
        [0, 10, 10, 0]
    ]


def test_pearson_by_hand_constant_prediction_and_constant_truth() -> None:
    # means 2.5 and 3.75; covariance sum 62.5; squares 75 and 68.75
    assert pearson([0, 0, 10, 0], [0, 5, 10, 0]) == pytest.approx(62.5 / (75 * 68.75) ** 0.5)
    assert pearson([0, 10, 0], [3, 3, 3]) == 0.0  # predicts nothing: covaries with nothing
    assert pearson([4, 4, 4], [0, 10, 0]) is None  # the unit is constant: undefined


def test_correlation_is_pooled_over_texts_not_a_mean_of_texts() -> None:
    # each text alone correlates perfectly; pooled, the second text's high baseline hurts
    excerpts = [Excerpt(["a", "b"], [0.0, 1.0]), Excerpt(["c", "d"], [0.0, 1.0])]

    class Fixed(LexicalSimulator):
        name = "fixed"

        async def simulate(self, explanation, texts):  # type: ignore[no-untyped-def]
            return [[0.0, 1.0], [9.0, 10.0]]

    res = asyncio.run(simulate("x", excerpts, Fixed(), seed=0))
    pooled = statistics.correlation([0, 10, 0, 10], [0, 1, 9, 10])
    assert res.all.value == pytest.approx(pooled) and pooled < 0.5
    assert (res.all.texts, res.all.tokens) == (2, 4)


def test_top_and_random_sample_and_unknown_positions() -> None:
    # text i peaks at i; texts 12 and 13 have no known activation
    excerpts = [Excerpt(["t", "u"], [0.0, float(i)]) for i in range(12)]
    excerpts += [Excerpt(["v"], [None]), Excerpt(["w"], [None])]
    top, rnd = top_and_random(excerpts, seed="unit")
    assert top == [11, 10, 9, 8, 7]
    assert len(rnd) == 5 and not set(rnd) & set(top)
    assert (top, rnd) == top_and_random(excerpts, seed="unit")  # seeded
    res = asyncio.run(simulate('"u"', excerpts, LexicalSimulator(), seed="unit"))
    # unknown positions are shown to the simulator but not scored
    assert res.all.tokens == 24 and res.all.texts == 14
    assert res.top_random.texts == 10 and res.top_random.tokens == sum(
        1 for i in [*top, *rnd] for a in excerpts[i].acts if a is not None
    )
    kinds = [t.sample for t in res.texts]
    assert {i for i, k in enumerate(kinds) if k == "top"} == set(top)
    assert {i for i, k in enumerate(kinds) if k == "random"} == set(rnd)


def test_constant_unit_is_a_target_error_not_a_score() -> None:
    excerpts = [Excerpt(["a", " b"], [0.0, 0.0])] * 3
    out = asyncio.run(score_explanations('"b"', '"a"', excerpts, LexicalSimulator(), seed=0))
    assert len(out) == 4
    assert all(
        r.status == "error" and r.error_category == "target" and r.value is None for r in out
    )


def test_results_carry_sizes_simulator_and_the_panel_texts() -> None:
    excerpts = [Excerpt([" x", " y"], [0.0, 2.0]) for _ in range(12)]
    res = asyncio.run(simulate('"y"', excerpts, LexicalSimulator(), seed=3))
    top, allr = score_results(res)
    assert top.metric == "simulation_top_random" and allr.metric == "simulation_all"
    assert top.value == pytest.approx(1.0) and allr.value == pytest.approx(1.0)
    assert top.details["simulator"] == "lexical" and top.details["texts"] == 10
    assert (allr.details["texts"], allr.details["tokens"]) == (12, 24)
    assert len(top.details["per_text"]) == 10 and "per_text" not in allr.details
    first = top.details["per_text"][0]
    assert (
        first["tokens"] == [" x", " y"]
        and first["true"] == [0, 10]
        and first["simulated"] == [0, 10]
    )


def _episode(i: int, agent: str, value: float, ceiling: float) -> EpisodeSummary:
    details = {"simulator": "lexical", "texts": 10, "tokens": 80}
    return summary(
        i,
        agent,
        family="sae",
        dataset="sae",
        variant="m",
        target_id=f"sae/m/s/{i}",
        inputs=16,
        scores=[
            ScoreResult(metric=m, value=value, details=details)
            for m in ("simulation_top_random", "simulation_all")
        ]
        + [
            ScoreResult(metric=f"{m}_ceiling", value=ceiling, details=details)
            for m in ("simulation_top_random", "simulation_all")
        ],
    )


def test_report_rows_name_their_simulator_with_the_ceiling() -> None:
    eps = [_episode(i, "scripted-sae", 0.4, 0.9) for i in range(3)]
    rep = build_report(eps)
    rows = [r for r in rep.rows if r.metric.startswith("simulation_")]
    assert {r.metric for r in rows} == {"simulation_top_random", "simulation_all"}
    for r in rows:
        assert r.simulator == "lexical" and r.value == pytest.approx(0.4)
        assert r.judge_ceiling == pytest.approx(0.9)
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(render_report(rep))
    text = console.export_text()
    assert "simulation (5 top + 5 random) [lexical]" in text
    assert "simulation (all held-out) [lexical]" in text
