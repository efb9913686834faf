"""Scoring goes through the benchmark registry: each family's record names its `Scorer`, which
`score_episode` runs in the scoring context the caller passes; report rows come from the records.
A new family (here a toy one registered in code) is scored and reported with no generic edit."""

from __future__ import annotations

import pytest

import interp_harness.evaluator.scorer as scorer_mod
import interp_harness.function_store.benchmark as registry
from interp_harness.evaluator.api import EpisodeStats, EpisodeSummary, ScoreResult
from interp_harness.evaluator.report import build_report
from interp_harness.evaluator.scorer import Scorer, ScoringContext, scorer_for
from interp_harness.evaluator.scoring import score_episode
from interp_harness.function_store.benchmark import Benchmark, ReportRow, families
from interp_harness.function_store.models import HiddenTruth, PublicMeta, Target

FAMILY = "toy-eval"


class ToyScorer(Scorer):
    """Scores 1 when the answer names what its target calls return."""

    metrics = ("toy_exact",)

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        if "crash" in final_answer:
            raise RuntimeError("a scorer bug")
        (out,) = await ctx.call(target.id, ["x"])
        return [ScoreResult(metric="toy_exact", value=float(out in final_answer))]


TOY = ToyScorer()


@pytest.fixture
def toy(monkeypatch):  # type: ignore[no-untyped-def]
    families()  # the entry points first: the toy record is added beside them
    record = Benchmark(
        family=FAMILY,
        title="toy",
        sources={},
        scorer=f"{__name__}:TOY",
        report_rows=(ReportRow("toy, exact", "toy_exact", "wilson", table2=True),),
        headline_metric="toy_exact",
        order=1000,
    )
    monkeypatch.setitem(registry._REGISTERED, FAMILY, record)
    monkeypatch.setattr(scorer_mod, "_SCORERS", {})
    # constructed without validation: the models' family fields do not yet list plugin families
    return Target.model_construct(
        id=f"toy/{FAMILY}/0",
        dataset="toy",
        family=FAMILY,
        variant="clean",
        public=PublicMeta(input_kind="string", prompt_family="strings"),
        hidden=HiddenTruth(runner="toy", description="echo"),
        unit_tests=[],
    )


def test_every_family_registers_a_scorer() -> None:
    for family in families():
        assert isinstance(scorer_for(family), Scorer), family


async def test_a_registered_family_is_scored_through_its_scorer_and_context(toy) -> None:  # type: ignore[no-untyped-def]
    async def call(target_id: str, inputs):  # type: ignore[no-untyped-def]
        return ["pong"]

    ctx = ScoringContext(call_target=call)
    (ok,) = await score_episode(toy, "[DESCRIPTION]: pong", EpisodeStats(), ctx)
    assert (ok.metric, ok.status, ok.value) == ("toy_exact", "ok", 1.0)


async def test_failures_are_error_states_never_zero(toy) -> None:  # type: ignore[no-untyped-def]
    (bug,) = await score_episode(toy, "crash", EpisodeStats(), ScoringContext())
    assert (bug.status, bug.error_category, bug.value) == ("error", "infrastructure", None)
    # no target client in the context: the scorer's call raises, still an error state
    (missing,) = await score_episode(toy, "pong", EpisodeStats(), ScoringContext())
    assert missing.status == "error" and "no target client" in (missing.error or "")
    unknown = toy.model_copy(update={"family": "no-such-family"})
    (err,) = await score_episode(unknown, "pong", EpisodeStats())
    assert err.status == "error" and "no-such-family" in (err.error or "")


def test_report_rows_come_from_the_registry(toy) -> None:  # type: ignore[no-untyped-def]
    eps = [
        EpisodeSummary(
            episode_id=str(k),
            target_id=toy.id,
            dataset="toy",
            family=FAMILY,
            variant="clean",
            agent="a",
            status="completed",
            scores=[ScoreResult(metric="toy_exact", value=float(k % 2))],
        )
        for k in range(4)
    ]
    (row,) = build_report(eps).rows
    assert (row.category, row.family, row.ci_method, row.value) == (
        "toy, exact",
        FAMILY,
        "wilson",
        0.5,
    )
