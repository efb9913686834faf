"""Paired statistics of two runs on shared targets (issue 50 item 5), on outcomes made by hand
and worked out by hand here: McNemar's exact test and the paired bootstrap, and the comparison
that pairs two runs' targets with the inputs each used and each run's floor."""

from __future__ import annotations

from math import comb

import pytest
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.compare import RunSide, compare_runs
from interp_harness.evaluator.paired import mcnemar, paired_bootstrap


def test_mcnemar_on_six_a_only_and_one_b_only() -> None:
    # 9 targets: A alone passes 6, B alone passes 1, both pass 1, neither 1
    a = [1, 1, 1, 1, 1, 1, 0, 1, 0]
    b = [0, 0, 0, 0, 0, 0, 1, 1, 0]
    m = mcnemar(a, b)
    assert (m.n, m.a_only, m.b_only, m.both, m.neither) == (9, 6, 1, 1, 1)
    # exact: under the null each of the 7 discordant pairs is B's with probability 1/2; two-sided
    # p = 2 * P(X <= 1) for X ~ Binomial(7, 1/2) = 2 * (1 + 7) / 128 = 0.125
    assert m.p_value == pytest.approx(2 * (comb(7, 0) + comb(7, 1)) / 2**7) == 0.125


def test_mcnemar_without_discordant_pairs_is_no_evidence() -> None:
    assert mcnemar([1, 0, 1], [1, 0, 1]).p_value == 1.0
    # all 5 discordant pairs on one side: p = 2 / 2**5
    assert mcnemar([1] * 5, [0] * 5).p_value == pytest.approx(2 / 32)


def test_paired_bootstrap_of_one_better_target_in_four() -> None:
    # differences B - A = 0, 0, 0, 1 (each target's pair kept together): a resample's mean is
    # K/4 with K ~ Binomial(4, 1/4): P(K=0) = 0.316, P(K<=2) = 0.949, P(K<=3) = 0.996, so the
    # 2.5% quantile is 0 and the 97.5% quantile 3/4
    d = paired_bootstrap([0.2, 0.5, 0.1, 0.0], [0.2, 0.5, 0.1, 1.0])
    assert d.n == 4 and d.diff == pytest.approx(0.25)
    assert (d.ci_low, d.ci_high) == pytest.approx((0.0, 0.75))


def test_paired_bootstrap_of_one_constant_difference_is_that_difference() -> None:
    d = paired_bootstrap([0.1, 0.4, 0.7], [0.3, 0.6, 0.9])
    assert (d.diff, d.ci_low, d.ci_high) == pytest.approx((0.2, 0.2, 0.2))
    assert paired_bootstrap([0.5], [0.7]).ci_low is None  # one pair: no interval


def _side(run: str, outcomes: dict[str, float], inputs: int, floor: dict[str, float]) -> RunSide:
    def eps(agent: str, rid: str, values: dict[str, float], n: int) -> list:
        return [
            summary(
                i, agent, [ScoreResult(metric="code_success", value=v)], inputs=n,
                episode_id=f"{rid}{i}", target_id=t, run_id=rid,
            )
            for i, (t, v) in enumerate(values.items())
        ]  # fmt: skip

    return RunSide(
        run_id=run,
        agent="scripted-numeric",
        config="mode default",
        episodes=eps("scripted-numeric", run, outcomes, inputs),
        floor=eps("interpolation", f"{run}-floor", floor, inputs),
        floor_run_id=f"{run}-floor" if floor else None,
        floor_agent="interpolation" if floor else None,
    )


def test_two_runs_are_paired_on_the_targets_both_scored() -> None:
    a = _side("a", {"t1": 1, "t2": 1, "t3": 1, "t4": 0, "t5": 1}, 40, {"t1": 1, "t2": 0})
    b = _side("b", {"t1": 0, "t2": 0, "t3": 1, "t4": 0, "t6": 1}, 12, {})
    comp = compare_runs([a, b])
    (row,) = [r for r in comp.rows if r.metric == "code_success"]
    # t1..t4 are shared; t5 and t6 belong to one run only
    assert (row.test, row.n, row.shared) == ("mcnemar", 4, 4)
    assert (row.a_mean, row.b_mean) == (0.75, 0.25)
    assert row.mcnemar is not None and (row.mcnemar.a_only, row.mcnemar.b_only) == (2, 0)
    assert row.mcnemar.p_value == pytest.approx(2 / 4)  # 2 * P(X <= 0), X ~ Binomial(2, 1/2)
    assert (row.a_inputs, row.b_inputs) == (40, 12)
    # A's floor scored t1 and t2 of the paired targets; B has none
    assert (row.a_floor, row.b_floor, row.a_floor_inputs) == (0.5, None, 40)
    assert any("run b has no floor run" in n for n in comp.notes)
