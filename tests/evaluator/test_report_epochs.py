"""Repeated samples in the report: a target's epochs are reduced with the run's reducer before
the mean over targets; errored epochs are left out and counted; n counts targets; each row
carries the mean over targets of the across-epoch sample variance. Figures worked out by hand."""

from __future__ import annotations

import pytest
from rich.console import Console
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.report import build_report, render_report


def _ep(target: str, epoch: int, metric: str, value: float | None, error: bool = False):  # type: ignore[no-untyped-def]
    sc = (
        ScoreResult(metric=metric, status="error", error_category="sandbox", error="boom")
        if error
        else ScoreResult(metric=metric, value=value)
    )
    return summary(0, "llm", [sc], episode_id=f"{target}-{epoch}", target_id=target, epoch=epoch)


# target a: 1, 0, (error); b: all three errored; c: 0, 0, 0; d: 1, 1, 1
EPISODES = [
    _ep("a", 0, "code_success", 1.0),
    _ep("a", 1, "code_success", 0.0),
    _ep("a", 2, "code_success", None, error=True),
    *[_ep("b", e, "code_success", None, error=True) for e in range(3)],
    *[_ep("c", e, "code_success", 0.0) for e in range(3)],
    *[_ep("d", e, "code_success", 1.0) for e in range(3)],
]


def _row(reducer: str):  # type: ignore[no-untyped-def]
    rep = build_report(EPISODES, reducer)  # type: ignore[arg-type]
    (row,) = [r for r in rep.rows if r.metric == "code_success"]
    return rep, row


@pytest.mark.parametrize(
    ("reducer", "value"),
    [("mean", (0.5 + 0.0 + 1.0) / 3), ("max", (1 + 0 + 1) / 3), ("at_least_one", 2 / 3)],
)
def test_epochs_are_reduced_per_target_then_averaged(reducer: str, value: float) -> None:
    rep, row = _row(reducer)
    assert row.value == pytest.approx(value)
    # n counts targets (b has no scored epoch); errors count the 4 errored epochs
    assert (row.scored, row.episodes, row.errors, row.epochs) == (3, 4, {"sandbox": 4}, 3)
    # variance per target over its scored epochs: a var(1, 0) = 0.5, c 0, d 0
    assert row.epoch_var == pytest.approx((0.5 + 0 + 0) / 3)
    assert any(f"reduced with `{reducer}`" in n for n in rep.notes)


def test_a_mean_of_epochs_is_not_a_0_1_outcome() -> None:
    _, mean_row = _row("mean")
    _, max_row = _row("max")
    # per-target rates 0.5, 0, 1: a mean's interval (bootstrap, inside [0, 1]); max keeps 0/1
    # outcomes: Wilson
    assert mean_row.ci_method == "bootstrap" and max_row.ci_method == "wilson"
    assert 0 <= mean_row.ci_low <= mean_row.value <= mean_row.ci_high <= 1
    assert max_row.ci_low is not None and 0 < max_row.ci_low < 2 / 3 < max_row.ci_high <= 1


def test_at_least_one_counts_a_success_on_a_0_1_row_and_is_max_elsewhere() -> None:
    eps = [_ep("a", e, "code_success", v) for e, v in enumerate((0.6, 0.2))]
    eps += [_ep("b", e, "code_success", v) for e, v in enumerate((0.4, 0.3))]
    rep = build_report(eps, "at_least_one")
    (row,) = [r for r in rep.rows if r.metric == "code_success"]
    assert row.value == pytest.approx(0.5)  # a: 0.6 >= 0.5 is a success (1), b: none (0)
    iou = [_ep("a", e, "domain_iou", v) for e, v in enumerate((0.6, 0.2))]
    rep = build_report(iou, "at_least_one")
    (row,) = [r for r in rep.rows if r.metric == "domain_iou"]
    assert row.value == pytest.approx(0.6) and row.epoch_var == pytest.approx(0.08)


def test_one_epoch_reports_as_before() -> None:
    once = [e.model_copy(update={"epoch": 0, "target_id": e.episode_id}) for e in EPISODES]
    rep = build_report(once, "max")
    (row,) = [r for r in rep.rows if r.metric == "code_success"]
    # episodes are the units: 8 scored of 12 (4 errors), 4 of them successes; no variance
    assert (row.scored, row.episodes, row.epochs, row.epoch_var) == (8, 12, 1, None)
    assert row.errors == {"sandbox": 4}
    assert row.value == pytest.approx(4 / 8) and row.ci_method == "wilson"
    assert not any("epoch" in n for n in rep.notes)
    text = _render(rep)
    assert "ep.var" not in text and "n: episodes scored / episodes" in text


def _render(rep) -> str:  # type: ignore[no-untyped-def]
    console = Console(width=100, record=True, color_system=None)
    console.print(render_report(rep))
    return console.export_text()


def test_epochs_table_fits_100_columns_with_its_variance() -> None:
    text = _render(_row("mean")[0])
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "ep.var" in text and "n: targets scored / targets" in text
    (line,) = [x for x in text.splitlines() if "numeric (NMSE" in x]
    assert "3/4" in line and line.rstrip().endswith(f"{0.5 / 3:.3f}")
