"""The scale-out tests' score hook (Ray workers import it by name: tests/harness/executors is on their
PYTHONPATH)."""

from __future__ import annotations

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.function_store.models import Target


async def answer_stats(
    target: Target, answer: str, stats: EpisodeStats, ctx: object = None
) -> list[ScoreResult]:
    """Scores that depend on the whole episode (its answer and usage), cheap to compute: the
    evaluator's own scoring runs agent code in a sandbox per episode, too slow for this test."""
    return [
        ScoreResult(metric="answer_chars", value=float(len(answer))),
        ScoreResult(metric="calls", value=float(stats.target_calls)),
        ScoreResult(metric="inputs", value=float(stats.inputs)),
    ]
