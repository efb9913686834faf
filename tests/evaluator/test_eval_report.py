import math

import pytest
from rich.console import Console
from support.evaluator_helpers import local_ctx, numeric_target

from interp_harness.evaluator.api import EpisodeStats, EpisodeSummary, ScoreResult
from interp_harness.evaluator.report import build_report, render_report, t_interval, wilson
from interp_harness.evaluator.scoring import score_episode


def test_wilson_by_hand():
    # k=8, n=10, z=1.96: center=(0.8+0.19208)/1.38416, half=1.96*sqrt(0.016+0.009604)/1.38416
    lo, hi = wilson(8, 10)
    c, h = (0.8 + 1.959963984540054**2 / 20) / (1 + 1.959963984540054**2 / 10), None
    h = (
        1.959963984540054
        * math.sqrt(0.8 * 0.2 / 10 + 1.959963984540054**2 / 400)
        / (1 + 1.959963984540054**2 / 10)
    )
    assert (lo, hi) == pytest.approx((c - h, c + h))
    assert (lo, hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # published table value
    assert wilson(0, 0) is None


def test_t_interval_by_hand():
    lo, hi = t_interval([0.0, 1.0, 0.5])  # mean .5, sd .5, t(0.975, 2) = 4.302653
    assert (lo, hi) == pytest.approx(
        (0.5 - 4.302653 * 0.5 / math.sqrt(3), 0.5 + 4.302653 * 0.5 / math.sqrt(3)), abs=1e-5
    )


def _ep(
    i, agent, family, metric, value, *, status="ok", cat=None, inputs=10, init=False, ep_cat=None
):
    sc = ScoreResult(metric=metric, value=value, status=status, error_category=cat)
    return EpisodeSummary(
        episode_id=str(i),
        target_id=f"t{i}",
        dataset="find-v1",
        family=family,
        variant="clean",
        agent=agent,
        status="completed" if ep_cat is None else "error",
        error_category=ep_cat,
        stats=EpisodeStats(target_calls=2, inputs=inputs, exemplar_init=init),
        scores=[sc] if status or value else [],
    )


def test_report_counts_errors_apart_and_bins_queries():
    eps = [
        _ep(i, "gpt", "numeric", "code_success", v, inputs=n)
        for i, (v, n) in enumerate([(1.0, 5), (0.0, 5), (1.0, 100), (1.0, 2000)])
    ]
    eps.append(_ep(9, "gpt", "numeric", "code_success", None, status="error", cat="sandbox"))
    eps.append(
        EpisodeSummary(
            episode_id="10",
            target_id="t10",
            dataset="find-v1",
            family="numeric",
            variant="clean",
            agent="gpt",
            status="error",
            error_category="agent",
        )
    )
    eps += [
        _ep(20 + i, "gpt", "entities", "unit_test", v, init=True) for i, v in enumerate([0.5, 0.7])
    ]
    rep = build_report(eps)
    row = next(r for r in rep.rows if r.metric == "code_success")
    assert row.scored == 4 and row.episodes == 6 and row.value == 0.75
    assert row.errors == {"sandbox": 1, "agent": 1}
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson(3, 4))
    ent = next(r for r in rep.rows if r.family == "entities" and r.metric == "unit_test")
    # unit tests lie in [0, 1]: the bootstrap interval, inside that range
    assert ent.exemplar_init is True and ent.value == pytest.approx(0.6)
    assert ent.ci_method == "bootstrap" and 0 <= ent.ci_low <= 0.6 <= ent.ci_high <= 1
    bins = {q.bin: q for q in rep.queries}
    assert (
        bins["1-16"].success == 0.5
        and bins["65-256"].success == 1.0
        and bins[">1024"].episodes == 1
    )
    assert any("interpolation" in n for n in rep.notes)
    Console(width=200, record=True).print(render_report(rep))  # renders
    assert Report_roundtrip(rep)


def Report_roundtrip(rep):
    from interp_harness.evaluator.report import Report

    return Report.model_validate_json(rep.model_dump_json()) == rep


async def test_score_episode_numeric_end_to_end():
    t = numeric_target(
        "e2e",
        lambda x: 0.5 * x + 3.0 if not 10 < x < 20 else 99.0,
        corruption={"type": "interval_inside", "interval": [10.0, 20.0]},
    )
    msg = (
        "[DESCRIPTION]: a line\n[DOMAIN]: odd between 10 and 20\n[CODE]: ```python\n"
        "def f(x):\n    return 0.5 * x + 3\n```"
    )
    res = await score_episode(t, msg, EpisodeStats(target_calls=1, inputs=40), local_ctx(t))
    by = {r.metric: r for r in res}
    assert (
        by["domain_iou"].value == pytest.approx(1.0)
        and by["domain_iou"].details["outcome"] == "found"
    )
    # 10 grid points (10.5..19.5) are 99 in the GT: the NMSE follows the formula
    gt = [0.5 * x + 3 if not 10 < x < 20 else 99.0 for x in (i + 0.5 for i in range(-128, 128))]
    pred = [0.5 * x + 3 for x in (i + 0.5 for i in range(-128, 128))]
    expected = sum((g - p) ** 2 for g, p in zip(gt, pred, strict=True)) / sum(g * g for g in gt)
    assert by["nmse"].value == pytest.approx(expected)
    assert by["code_success"].value == (1.0 if expected < 0.1 else 0.0)
    assert by["nmse"].details["parser"] == "tolerant"
