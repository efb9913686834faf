"""The SAE rows of `harness report`: each with its ceiling (`<metric>_ceiling`), and no
"success by inputs" table, whose 0/1 successes a mean of rates does not have."""

from __future__ import annotations

from support.evaluator_helpers import summary

from interp_harness.evaluator.api import EpisodeSummary, ScoreResult
from interp_harness.evaluator.report import build_report
from interp_harness.function_store.sae.benchmark import BENCHMARK


def _ep(i: int, agent: str, value: float, ceiling: float) -> EpisodeSummary:
    scores = [
        s
        for r in BENCHMARK.report_rows
        for s in (
            ScoreResult(metric=r.metric, value=value),
            ScoreResult(metric=f"{r.metric}_ceiling", value=ceiling),
        )
    ]
    return summary(
        i, agent, scores, family="sae", dataset="sae", variant="m", target_id=f"sae/m/s/{i}",
        calls=4, inputs=64,
    )  # fmt: skip


def test_rows_carry_their_ceiling_and_no_success_table() -> None:
    eps = [_ep(i, "scripted-sae", 0.6, 0.8) for i in range(3)]
    eps += [_ep(i, "sae-frequent-tokens", 0.5, 0.8) for i in range(3)]
    rep = build_report(eps)
    rows = [r for r in rep.rows if r.family == "sae"]
    assert {(r.agent, r.metric) for r in rows} == {
        (a, r.metric)
        for a in ("scripted-sae", "sae-frequent-tokens")
        for r in BENCHMARK.report_rows
    }
    for r in rows:
        assert abs(r.judge_ceiling - 0.8) < 1e-9 and r.chance is None
        assert abs(r.value - (0.6 if r.agent == "scripted-sae" else 0.5)) < 1e-9
    assert rep.queries == []
    assert not [n for n in rep.notes if "no `sae-frequent-tokens` baseline" in n]
