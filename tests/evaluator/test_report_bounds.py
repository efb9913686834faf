"""Intervals inside each metric's range, and rows that carry no information said so (issue 50
item 4): `sae, observational precision 0.62 [-0.96, 2.21] 2/4` (Student-t on a bounded metric);
fuzzing rows at 0.50 [0.50, 0.50] for agent and floor with no "≈ chance" flag; accuracy, balanced
accuracy and AUC as three identical rows; a run whose episodes all failed (0 inputs) in the
"1-16 inputs" bin."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support import fuzz_settings
from support.evaluator_helpers import summary

from interp_harness.evaluator.answer_bounds import WORST
from interp_harness.evaluator.api import EpisodeSummary, ScoreResult
from interp_harness.evaluator.metric_scale import scale_of, worst_is_low
from interp_harness.evaluator.report import build_report, report_rows

# every report row of the registry whose metric has a known range
BOUNDED = sorted({m for _, _, m, method, _ in report_rows() if method != "wilson" and scale_of(m)})
FAMILY = {m: f for _, f, m, _, _ in report_rows()}


@st.composite
def scored_rows(draw: st.DrawFn) -> tuple[str, list[float]]:
    metric = draw(st.sampled_from(BOUNDED))
    s = scale_of(metric)
    assert s is not None
    # values at the ends of the range and anywhere between, as per-target means come out
    value = st.one_of(st.sampled_from([s.low, s.high]), st.floats(s.low, s.high))
    return metric, draw(st.lists(value, min_size=1, max_size=40))


@given(scored_rows())
@fuzz_settings(100)
def test_every_interval_of_a_bounded_metric_stays_inside_its_range(
    case: tuple[str, list[float]],
) -> None:
    metric, values = case
    s = scale_of(metric)
    assert s is not None
    eps = [
        summary(i, "a", [ScoreResult(metric=metric, value=v)], family=FAMILY[metric])
        for i, v in enumerate(values)
    ]
    (row,) = [r for r in build_report(eps).rows if r.metric == metric]
    assert row.scored == len(values)
    if len(values) < 2:
        assert row.ci_low is None
        return
    assert row.ci_method == "bootstrap"
    assert s.low <= row.ci_low <= row.value <= row.ci_high <= s.high, (metric, values, row)


def test_the_precision_of_the_issue_has_an_interval_inside_0_1() -> None:
    eps = [
        summary(i, "a", [ScoreResult(metric="observational_precision", value=v)], family="sae")
        for i, v in enumerate((0.0, 1.0, 0.5, 1.0))
    ]
    (row,) = [r for r in build_report(eps).rows if r.metric == "observational_precision"]
    assert 0.0 <= row.ci_low < row.value < row.ci_high <= 1.0


def test_ranges_start_at_each_metrics_worst_value() -> None:
    assert worst_is_low() == {}
    assert all(scale_of(m) is not None for m, w in WORST.items() if w is not None)


def _sae(i: int, agent: str, run: str, value: float, ceiling: float, **fields) -> EpisodeSummary:
    metrics = ("fuzzing_balanced_accuracy", "fuzzing_auc", "fuzzing_accuracy")
    scores = [ScoreResult(metric=m, value=value) for m in metrics]
    scores += [ScoreResult(metric=f"{m}_ceiling", value=ceiling) for m in metrics]
    return summary(i, agent, scores, family="sae", episode_id=f"{run}{i}", run_id=run, **fields)


def test_fuzzing_at_chance_for_agent_floor_and_reference_carries_no_information() -> None:
    eps = [_sae(i, "scripted-sae", "r1", 0.5, 0.5) for i in range(4)]
    eps += [_sae(i, "sae-frequent-tokens", "f1", 0.5, 0.5, floor_of="r1") for i in range(4)]
    rep = build_report(eps)
    rows = {(r.agent, r.metric): r for r in rep.rows}
    agent = rows[("scripted-sae", "fuzzing_balanced_accuracy")]
    floor = rows[("sae-frequent-tokens", "fuzzing_balanced_accuracy")]
    # balanced accuracy defines its chance level (0.5): the baseline of the agent and the floor
    assert (agent.baseline, agent.baseline_source) == (0.5, "chance")
    assert (floor.baseline, floor.baseline_source) == (0.5, "chance")
    assert agent.no_information and floor.no_information
    # the three fuzzing rows scored the same on every latent: one row, the others point to it
    same = [rows[("scripted-sae", m)] for m in ("fuzzing_auc", "fuzzing_accuracy")]
    assert [r.merged_into for r in same] == ["sae, fuzzing balanced accuracy"] * 2
    assert agent.same_as == ["sae, fuzzing AUC", "sae, fuzzing accuracy"]


def test_a_reference_well_above_chance_leaves_the_rows_informative_and_apart() -> None:
    eps = [_sae(i, "scripted-sae", "r1", 0.5 + 0.1 * (i % 2), 0.9) for i in range(4)]
    eps[0].scores[2] = ScoreResult(metric="fuzzing_accuracy", value=0.55)  # unbalanced: differs
    rows = {r.metric: r for r in build_report(eps).rows}
    assert not rows["fuzzing_balanced_accuracy"].no_information
    assert rows["fuzzing_accuracy"].merged_into is None
    assert rows["fuzzing_auc"].merged_into == "sae, fuzzing balanced accuracy"


def test_episodes_that_all_failed_are_in_no_inputs_bin() -> None:
    failed = [
        summary(
            i, "a", [], inputs=0, calls=0, status="error", error_category="agent",
            episode_id=f"x{i}", run_id="failed-run",
        )
        for i in range(3)
    ]  # fmt: skip
    ok = [
        summary(i, "a", [ScoreResult(metric="code_success", value=1.0)], inputs=i, run_id="ok")
        for i in range(2)
    ]
    rep = build_report(failed + ok)
    assert {(q.run_id, q.bin, q.episodes) for q in rep.queries} == {
        ("ok", "0", 1),
        ("ok", "1-16", 1),
    }
    assert rep.unbinned == 3
    assert any("3 episode(s) without a score" in n for n in rep.notes)


def test_mcc_takes_chance_and_the_firing_share_no_baseline() -> None:
    def ep(i: int, agent: str, run: str, mcc: float, **fields) -> EpisodeSummary:  # type: ignore[no-untyped-def]
        scores = [
            ScoreResult(metric="observational_mcc", value=mcc),
            ScoreResult(metric="observational_mcc_ceiling", value=0.6),
            ScoreResult(metric="observational_firing_share", value=0.5),
        ]
        return summary(i, agent, scores, family="sae", episode_id=f"{run}{i}", run_id=run, **fields)

    eps = [ep(i, "scripted-sae", "r1", 0.4) for i in range(4)]
    # the floor's mean MCC, -0.03, is one noisy draw of chance: the baseline is MCC's own 0
    eps += [ep(i, "sae-frequent-tokens", "f1", -0.03, floor_of="r1") for i in range(4)]
    rows = {(r.agent, r.metric): r for r in build_report(eps).rows}
    mcc = rows[("scripted-sae", "observational_mcc")]
    assert (mcc.baseline, mcc.baseline_source, mcc.no_information) == (0.0, "chance", False)
    share = rows[("scripted-sae", "observational_firing_share")]
    assert (share.baseline, share.baseline_source, share.no_information) == (None, None, False)


def test_a_distance_is_informative_when_its_reference_is_far_below_the_baseline() -> None:
    # circuits' CMD: lower is better; the true circuit's (the ceiling) is 0, an empty claim's 1
    def ep(i: int, cmd: float, ceiling: float) -> EpisodeSummary:
        scores = [
            ScoreResult(metric="cmd", value=cmd),
            ScoreResult(metric="cmd_ceiling", value=ceiling),
        ]
        return summary(i, "a", scores, family="circuits", episode_id=f"c{i}", run_id=f"r{ceiling}")

    good = build_report([ep(i, 0.1 * i, 0.0) for i in range(4)]).rows
    [cmd] = [r for r in good if r.metric == "cmd"]
    assert (cmd.baseline, cmd.no_information) == (1.0, False)
    assert cmd.ci_low is not None and 0.0 <= cmd.ci_low <= cmd.ci_high <= 1.0  # type: ignore[operator]
    poor = build_report([ep(i, 0.9, 0.95) for i in range(4)]).rows
    assert [r.no_information for r in poor if r.metric == "cmd"] == [True]
