"""Runs of one agent are not pooled (issue 50 item 3): `harness report RUN_CODE RUN_CODE_TOOLS`
(one agent, the same 4 targets, modes `code` and `code-tools`) printed one row 8/8, each target
counted twice and the interval too narrow. Each run has rows of its own, headed by its mode and
options."""

from __future__ import annotations

from rich.console import Console
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.report import build_report, render_report, wilson


def _run(run_id: str, mode: str, outcomes: tuple[float, ...]) -> list:
    return [
        summary(
            i,
            "scripted-numeric-code",
            [ScoreResult(metric="code_success", value=v)],
            episode_id=f"{run_id}-{i}",
            run_id=run_id,
            config=f"mode {mode}",
        )
        for i, v in enumerate(outcomes)
    ]


def test_two_runs_of_one_agent_are_two_rows_each_over_its_own_targets() -> None:
    eps = _run("r-code", "code", (1.0, 1.0, 1.0, 0.0)) + _run("r-tools", "code-tools", (1.0,) * 4)
    rep = build_report(eps)
    rows = [r for r in rep.rows if r.metric == "code_success"]
    assert [(r.run_id, r.config, r.scored, r.episodes) for r in rows] == [
        ("r-code", "mode code", 4, 4),
        ("r-tools", "mode code-tools", 4, 4),
    ]
    assert [r.value for r in rows] == [0.75, 1.0]
    # each interval counts 4 targets, not 8 episodes
    assert (rows[1].ci_low, rows[1].ci_high) == wilson(4, 4)
    text = Console(width=200, record=True)
    text.print(render_report(rep))
    out = " ".join(text.export_text().split())  # a long heading wraps between its parts
    assert "run r-code · mode code" in out and "run r-tools · mode code-tools" in out
    assert "8/8" not in out


def test_summaries_without_a_run_report_per_agent_as_before() -> None:
    eps = [summary(i, "a", [ScoreResult(metric="code_success", value=1.0)]) for i in range(3)]
    (row,) = [r for r in build_report(eps).rows if r.metric == "code_success"]
    assert (row.run_id, row.scored) == ("", 3)
