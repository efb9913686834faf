"""Scoring one episode: the evaluator's entry point for the orchestrator.

`score_episode(target, final_answer, stats, ctx)` runs the scorer the target's family registers
(`Benchmark.scorer`, see interp_harness.evaluator.scorer) in the scoring context the caller passes in. Each
family's metrics are documented with its scorer; wherever a judge runs and HARNESS_JUDGE_CEILING is
on, `unit_test_ceiling` and `unit_test_ceiling_strict` (the ground-truth description through the
same judge) come too. Batch scoring of many answers (one sandbox start per chunk) lives with the
family's scorer.
"""

from __future__ import annotations

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.scorer import EvalSettings, Item, ScoringContext, scorer_for
from interp_harness.function_store.models import Target

__all__ = ["EvalSettings", "Item", "ScoringContext", "score_episode"]


async def score_episode(
    target: Target,
    final_answer: str,
    stats: EpisodeStats,
    ctx: ScoringContext | None = None,
) -> list[ScoreResult]:
    """All scores of one finished episode. Errors are returned as error states, never raised
    (and never as a 0). Without `ctx`, scores that need a target client, a code runner or a judge
    are error states."""
    ctx = ctx or ScoringContext()
    try:
        scorer = scorer_for(target.family)
        return await scorer.score(target, final_answer, stats, ctx)
    except Exception as e:  # no scorer, or a scorer's bug: an infrastructure error state
        return [
            ScoreResult(
                metric="evaluator",
                status="error",
                error_category="infrastructure",
                error=f"{type(e).__name__}: {e}",
            )
        ]
