"""Description rows against the judge ceiling and chance, from hand-built report inputs."""

from rich.console import Console
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.judge import HOW_TO, JudgeSettings
from interp_harness.evaluator.report import CHANCE, build_report, render_report, wilson
from interp_harness.evaluator.scoring import score_episode

VERDICTS = [{"triplet": k} for k in range(10)]  # a ceiling's 10 triplets (only counted)


def _ep(i: int, value: float | None, ceiling: float | None, *, err: ScoreResult | None = None):
    scores = []
    if err is not None:
        scores.append(err)
    else:
        scores.append(ScoreResult(metric="unit_test", value=value))
    if ceiling is not None:
        scores.append(
            ScoreResult(metric="unit_test_ceiling", value=ceiling, details={"verdicts": VERDICTS})
        )
    return summary(i, "scripted-entities", scores, family="entities", calls=3, inputs=48)


def _row(report):
    return next(r for r in report.rows if r.metric == "unit_test")


def _text(report) -> str:
    c = Console(width=250, record=True)
    c.print(render_report(report))
    return c.export_text()


def test_ceiling_near_chance_marks_rows_as_no_information():
    # ceilings 0.3 / 0.4 alternating: mean 0.35, pooled 35/100 triplets
    eps = [_ep(i, 0.5, 0.3 if i % 2 else 0.4) for i in range(10)]
    rep = build_report(eps)
    row = _row(rep)
    assert row.chance == CHANCE and abs(row.judge_ceiling - 0.35) < 1e-9
    assert (row.ceiling_ci_low, row.ceiling_ci_high) == wilson(35, 100)
    assert row.judge_status == "near_chance"
    assert row.value == 0.5  # kept in the data, not presented as a result
    text = _text(rep)
    assert "judge ceiling 0.35 ≈ chance (0.33): these description scores carry no information" in (
        text
    )
    assert "(0.50)" in text and "(chance 0.33)" in text


def test_small_sample_whose_interval_includes_chance_is_no_information():
    # one function at 0.6: above chance + 0.15, but Wilson(6, 10) = [0.31, 0.83] includes 1/3
    rep = build_report([_ep(0, 0.6, 0.6)])
    assert wilson(6, 10)[0] < CHANCE
    assert _row(rep).judge_status == "near_chance"


def test_ceiling_just_under_margin_is_no_information_even_with_many_triplets():
    # 0.45 over 2000 triplets: the interval excludes chance, but 0.45 < 1/3 + 0.15
    rep = build_report([_ep(i, 0.4, 0.45) for i in range(200)])
    assert _row(rep).ceiling_ci_low > CHANCE
    assert _row(rep).judge_status == "near_chance"


def test_good_ceiling_presents_scores_with_chance_beside_it():
    rep = build_report([_ep(i, 0.7, 0.9 + 0.01 * (i % 3)) for i in range(10)])
    row = _row(rep)
    assert row.judge_status == "ok" and row.judge_note is None
    text = _text(rep)
    assert "no information" not in text and "0.70" in text and "(chance 0.33)" in text


def test_scores_without_ceiling_say_so():
    row = _row(build_report([_ep(i, 0.7, None) for i in range(3)]))
    assert row.judge_status == "no_ceiling" and "no judge ceiling" in row.judge_note


async def test_no_judge_rows_say_why_and_how_to_configure():
    from support.evaluator_helpers import local_ctx, string_target

    target = string_target([(f"ab{k}", f"AB{k}") for k in range(10)])
    scores = await score_episode(
        target,
        "[DESCRIPTION]: upper-cases",
        EpisodeStats(),
        local_ctx(target, judge_settings=JudgeSettings(provider="openai-compatible", url=None)),
    )
    ut = next(s for s in scores if s.metric == "unit_test")
    assert ut.status == "error" and ut.error_category == "judge"
    assert ut.details["judge_configured"] is False and "HARNESS_JUDGE_URL" in ut.error
    eps = [_ep(i, None, None, err=ut.model_copy(deep=True)) for i in range(4)]
    rep = build_report(eps)
    row = _row(rep)
    assert row.judge_status == "not_configured" and row.scored == 0
    assert row.errors == {"judge": 4}
    text = _text(rep)
    assert "no judge" in text
    assert "description scores not computed: no judge configured. " + HOW_TO in " ".join(
        text.split()
    )


def test_a_family_ceiling_by_convention_is_shown_beside_its_row():
    """`<metric>_ceiling` (a family's reference answer through the same scorer) becomes the row's
    ceiling, without FIND's chance level or judge verdict."""
    eps = [
        summary(
            i,
            "a",
            [
                ScoreResult(metric="code_success", value=float(i % 2)),
                ScoreResult(metric="code_success_ceiling", value=ceiling),
            ],
            calls=1,
            inputs=1,
        )
        for i, ceiling in enumerate([0.8, 1.0, 0.9])
    ]
    rep = build_report(eps)
    row = next(r for r in rep.rows if r.metric == "code_success")
    assert abs(row.judge_ceiling - 0.9) < 1e-9
    assert row.chance is None and row.judge_status is None
    text = _text(rep)
    assert "0.90" in text and "the benchmark's reference answer through the same scorer" in text
