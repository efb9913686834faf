"""Scoring FIND string answers: exact match of the agent's code on the unit tests' correct pairs
(default and FIND-compatible), then the judge's unit tests of its description."""

from __future__ import annotations

from interp_harness.evaluator import strings as st
from interp_harness.evaluator.sandbox_exec import CodeRunner, ExecSettings
from interp_harness.evaluator.scorer import (
    EvalSettings,
    Item,
    parse_details,
    refused_code,
    run_code_jobs_with,
    score_parts,
)
from interp_harness.evaluator.unit_tests import PAIRS_TEMPLATE, UnitTestPrompt, judge_scores
from interp_harness.sdk import (
    CodeJob,
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)

PROMPT = UnitTestPrompt("strings", PAIRS_TEMPLATE)  # FIND's find/prompts/evaluator/strings.txt


def score_strings_batch(
    items: list[Item],
    *,
    runner: CodeRunner | None,
    settings: EvalSettings | None = None,
    exec_settings: ExecSettings | None = None,
) -> list[list[ScoreResult]]:
    """Exact-match code scores, default and FIND-compatible, for many answers."""
    s = settings or EvalSettings()
    jobs: list[CodeJob] = []
    pairs: list[list[tuple[str, str]] | str] = []  # the pairs, or why the unit tests are unusable
    too_long = refused_code(items)  # failed here, no sandbox start
    for k, it in enumerate(items):
        try:
            p = st.correct_pairs(it.target.unit_tests)
        except (ValueError, IndexError) as e:
            pairs.append(str(e))
            continue
        pairs.append(p)
        if it.answer.code.strip() and it.answer.func_name and str(k) not in too_long:
            for call in ("direct", "find-compat"):
                jobs.append(
                    CodeJob(
                        id=f"{k}:{call}",
                        code=it.answer.code,
                        func_name=it.answer.func_name,
                        kind="text",
                        call=call,
                        inputs=[i for i, _ in p],
                    )
                )
    results = {r.id: r for r in run_code_jobs_with(runner, jobs, s, exec_settings)}
    for k, r in too_long.items():
        results |= {f"{k}:{call}": r for call in ("direct", "find-compat")}
    out = []
    for k, (it, p) in enumerate(zip(items, pairs, strict=True)):
        d = parse_details(it.answer)
        if isinstance(p, str):
            out.append(
                [
                    ScoreResult(
                        metric=m,
                        status="error",
                        error_category="target",
                        error=f"bad unit tests: {p}",
                        details=d,
                    )
                    for m in ("string_exact", "string_exact_find")
                ]
            )
            continue
        out.append(
            [
                st.score_default(p, results.get(f"{k}:direct"), d),
                st.score_find_compat(p, results.get(f"{k}:find-compat"), d),
            ]
        )
    return out


class StringsScorer(Scorer):
    """FIND strings: `string_exact`, `string_exact_find`, and the judge's `unit_test(_strict)`."""

    metrics = ("string_exact", "string_exact_find", "unit_test", "unit_test_strict")

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)

        async def code() -> list[ScoreResult]:
            return await ctx.code_scores(score_strings_batch, Item(target, parsed))

        return await score_parts(
            [code, lambda: judge_scores(target, parsed.description, parsed.parser, ctx, PROMPT)],
            stats,
        )

    def score_batch(self, items: list[Item], ctx: ScoringContext) -> list[list[ScoreResult]]:
        """Code scores of many answers (`score_strings_batch`; the judge is per episode)."""
        return ctx.code_batch(score_strings_batch, items)
