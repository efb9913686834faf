"""Scoring FIND numeric answers: NMSE of the agent's code on FIND's grid (and the domain IoU of a
corrupted target), one answer per episode (`NumericScorer`) or many at once (`score_numeric_batch`,
one sandbox start per chunk: benchmarks and offline re-scoring)."""

from __future__ import annotations

from interp_harness.evaluator import numeric as num
from interp_harness.evaluator.domain import score_domain
from interp_harness.evaluator.sandbox_exec import CodeRunner, ExecSettings
from interp_harness.evaluator.scorer import (
    EvalSettings,
    Item,
    NoTargetClient,
    parse_details,
    refused_code,
    run_code_jobs_with,
    score_parts,
)
from interp_harness.sdk import (
    CodeJob,
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)


def ground_truth_in_process(target: Target) -> num.GroundTruth:
    """The ground truth by running the target here: offline tools on trusted targets only (an
    episode reads it through its sandboxed target client, `ground_truth_via`)."""
    from interp_harness.function_store.runtime import build_runner

    try:
        outputs = build_runner(target).call(num.grid_inputs())
    except Exception as e:  # the target could not be served: a target error, not a score
        return num.GroundTruth([], [], 0, error=f"{type(e).__name__}: {e}")
    return num.ground_truth_from_outputs(outputs)


async def ground_truth_via(ctx: ScoringContext, target: Target) -> num.GroundTruth:
    """The ground truth through the context's (the orchestrator's sandboxed) target client."""
    try:
        outputs = await ctx.call(target.id, num.grid_inputs())
    except Exception as e:
        return num.GroundTruth([], [], 0, error=f"{type(e).__name__}: {e}")
    return num.ground_truth_from_outputs(outputs)


def score_numeric_batch(
    items: list[Item],
    *,
    runner: CodeRunner | None,
    settings: EvalSettings | None = None,
    exec_settings: ExecSettings | None = None,
    ground_truths: list[num.GroundTruth] | None = None,
) -> list[list[ScoreResult]]:
    """NMSE code scores (+ domain IoU) for many answers; one list of results per item, in order.
    `ground_truths` (one per item) were read through a target client; else the targets run here
    (`ground_truth_in_process`). Agent code runs in sandboxes started through `runner`."""
    s = settings or EvalSettings()
    gts = ground_truths or [ground_truth_in_process(it.target) for it in items]
    jobs: list[CodeJob] = []
    refused = refused_code(items)  # too long: failed here, no sandbox start
    for k, (it, gt) in enumerate(zip(items, gts, strict=True)):
        if (
            gt.error is None
            and gt.exception_at is None
            and it.answer.code.strip()
            and it.answer.func_name
            and str(k) not in refused
        ):
            jobs.append(
                CodeJob(
                    id=str(k),
                    code=it.answer.code,
                    func_name=it.answer.func_name,
                    kind="number",
                    call="find-compat",
                    inputs=[repr(x) for x in gt.xs],
                )
            )
    results = {r.id: r for r in run_code_jobs_with(runner, jobs, s, exec_settings)} | refused
    out = []
    for k, (it, gt) in enumerate(zip(items, gts, strict=True)):
        d = parse_details(it.answer)
        scores = num.score_from_agent_results(
            gt,
            results.get(str(k)),
            threshold=s.nmse_threshold,
            gt_exception=s.gt_exception,
            details=d,
        )
        scores.append(
            score_domain(
                it.answer.domain, it.target.hidden.corruption, {"parser": it.answer.parser}
            )
        )
        out.append(scores)
    return out


class NumericScorer(Scorer):
    """FIND numeric: `code_success` (NMSE < threshold, FIND's score), `nmse`, `domain_iou`."""

    metrics = ("code_success", "nmse", "domain_iou")

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)

        async def code() -> list[ScoreResult]:
            if ctx.call_target is None:  # misconfigured caller: infrastructure, not the target's
                raise NoTargetClient("no target client in the scoring context")
            gt = await ground_truth_via(ctx, target)
            item = Item(target, parsed)
            return await ctx.code_scores(score_numeric_batch, item, ground_truths=[gt])

        return await score_parts([code], stats)

    def score_batch(self, items: list[Item], ctx: ScoringContext) -> list[list[ScoreResult]]:
        """Code scores of many answers, the targets run here (`score_numeric_batch`)."""
        return ctx.code_batch(score_numeric_batch, items)
