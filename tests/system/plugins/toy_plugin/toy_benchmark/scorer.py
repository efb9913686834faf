"""The toy scorer: 1 when the description names the target's mood, reading the mood again through
the episode's sandboxed target client (never from the hidden spec alone)."""

from __future__ import annotations

from interp_harness.sdk import (
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)


class ToyScorer(Scorer):
    metrics = ("toy_mood",)

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        said = parse_answer(final_answer or "").description.strip().lower()
        try:
            [out] = await ctx.call(target.id, ["Ab"])
        except Exception as e:  # the target could not be read: an error state, not a 0
            return [
                ScoreResult(
                    metric="toy_mood", status="error", error_category="target", error=str(e)
                )
            ]
        mood = "shout" if out.output == "AB" else "whisper"
        return [ScoreResult(metric="toy_mood", value=float(said == mood), details={"said": said})]
