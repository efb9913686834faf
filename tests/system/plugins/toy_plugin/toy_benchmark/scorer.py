"""The toy scorer. `toy_mood`: 1 when the description names the target's mood. `toy_code`: the
share of probes on which the answer's code returns what the target returns, the code run in the
scoring sandbox. The target's outputs are read again through the episode's sandboxed target
client (never from the hidden spec alone)."""

from __future__ import annotations

import asyncio

from interp_harness.sdk import (
    CodeJob,
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    func_name_tolerant,
    parse_answer,
)

PROBES = ("Ab", "hello World", "MiXeD 42")


class ToyScorer(Scorer):
    metrics = ("toy_mood", "toy_code")

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        answer = parse_answer(final_answer or "")
        said = answer.description.strip().lower()
        try:
            truth = [out.output for out in await ctx.call(target.id, list(PROBES))]
        except Exception as e:  # the target could not be read: an error state, not a 0
            return [
                ScoreResult(metric=m, status="error", error_category="target", error=str(e))
                for m in self.metrics
            ]
        mood = "shout" if truth[0] == "AB" else "whisper"
        return [
            ScoreResult(metric="toy_mood", value=float(said == mood), details={"said": said}),
            await code_score(answer.code, truth, ctx),
        ]


async def code_score(code: str, truth: list[str], ctx: ScoringContext) -> ScoreResult:
    """The answer's function on PROBES against the target's outputs. kind "text": each result
    is `{"v": str}` (`CodeResult.value(i)` gives the str), or `{"err": ...}` / `{"nonstr": ...}`
    where the code raised or returned something else (None, a miss)."""
    job = CodeJob(
        id="toy", code=code, func_name=func_name_tolerant(code), kind="text", inputs=PROBES
    )
    [res] = await asyncio.to_thread(ctx.run_code, [job])  # the sandbox blocks: not on the loop
    if res.status == "infrastructure":  # the sandbox failed, not the answer
        return ScoreResult(
            metric="toy_code", status="error", error_category="sandbox", error=res.reason
        )
    got = [res.value(i) for i in range(len(PROBES))]
    hits = sum(g == t for g, t in zip(got, truth, strict=True))
    details = {"got": got, "reason": res.reason, "results": res.results}
    return ScoreResult(metric="toy_code", value=hits / len(PROBES), details=details)
