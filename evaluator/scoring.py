"""Scoring one episode (or a batch of answers): the evaluator's entry points.

`score_episode(target, final_answer, stats)` is what the orchestrator calls at each episode end.
`score_numeric_batch` / `score_strings_batch` score many answers with one sandbox start per chunk
(benchmarks and offline re-scoring use them).

Metrics produced (`ScoreResult.metric`):
- numeric: `code_success` (NMSE < threshold, FIND's score), `nmse`, `domain_iou`;
- strings: `string_exact` (correct default), `string_exact_find` (FIND-compatible), and the judge's
  `unit_test` / `unit_test_strict`;
- entities, relations: `unit_test` / `unit_test_strict`;
- wherever a judge runs and HARNESS_JUDGE_CEILING is on: `unit_test_ceiling` and
  `unit_test_ceiling_strict` (the ground-truth description through the same judge).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict

from evaluator import numeric as num
from evaluator import strings as st
from evaluator.api import EpisodeStats, ScoreResult, TargetCall, target_call
from evaluator.domain import score_domain
from evaluator.judge import (
    JudgeClient,
    JudgeError,
    JudgeNotConfigured,
    JudgeSettings,
    make_judge,
)
from evaluator.parsing import ParsedAnswer, ParserName, parse_answer
from evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from evaluator.unit_tests import SYSTEM_PROMPT, Job, judge_jobs, load_template, prompt_hash
from function_store.models import Target
from function_store.runtime import build_runner


class EvalSettings(BaseSettings):
    """`HARNESS_EVAL_*`: scoring options."""

    model_config = SettingsConfigDict(env_prefix="HARNESS_EVAL_")

    parser: ParserName = "tolerant"
    nmse_threshold: float = num.DEFAULT_THRESHOLD
    gt_exception: Literal["fail", "error"] = "fail"
    cpu_s: float = 2.0
    wall_s: float = 5.0
    memory_mb: int = 256
    output_bytes: int = 65_536

    def limits(self) -> CodeLimits:
        return CodeLimits(
            cpu_s=self.cpu_s,
            wall_s=self.wall_s,
            memory_mb=self.memory_mb,
            output_bytes=self.output_bytes,
        )


@dataclass
class Item:
    target: Target
    answer: ParsedAnswer


def _parse_details(parsed: ParsedAnswer) -> dict:
    return {"parser": parsed.parser, "func_name": parsed.func_name, "code_chars": len(parsed.code)}


def _ground_truth(target: Target) -> num.GroundTruth:
    try:
        outputs = build_runner(target).call(num.grid_inputs())
    except Exception as e:  # the target could not be served: a target error, not a score
        return num.GroundTruth([], [], 0, error=f"{type(e).__name__}: {e}")
    return num.ground_truth_from_outputs(outputs)


async def _ground_truth_via(call: TargetCall, target: Target) -> num.GroundTruth:
    """The ground truth through the orchestrator's (sandboxed) target client."""
    try:
        outputs = await call(target.id, num.grid_inputs())
    except Exception as e:
        return num.GroundTruth([], [], 0, error=f"{type(e).__name__}: {e}")
    return num.ground_truth_from_outputs(outputs)


def score_numeric_batch(
    items: list[Item],
    *,
    settings: EvalSettings | None = None,
    exec_settings: ExecSettings | None = None,
    ground_truths: list[num.GroundTruth] | None = None,
) -> list[list[ScoreResult]]:
    """NMSE code scores (+ domain IoU) for many answers; one list of results per item, in order.
    `ground_truths` (one per item) were read through a target client; else targets run here."""
    s = settings or EvalSettings()
    gts = ground_truths or [_ground_truth(it.target) for it in items]
    jobs: list[CodeJob] = []
    for k, (it, gt) in enumerate(zip(items, gts, strict=True)):
        if (
            gt.error is None
            and gt.exception_at is None
            and it.answer.code.strip()
            and it.answer.func_name
        ):
            jobs.append(
                CodeJob(
                    id=str(k),
                    code=it.answer.code,
                    func_name=it.answer.func_name,
                    kind="numeric",
                    call="find-compat",
                    inputs=[repr(x) for x in gt.xs],
                )
            )
    results = {r.id: r for r in run_code_jobs(jobs, limits=s.limits(), settings=exec_settings)}
    out = []
    for k, (it, gt) in enumerate(zip(items, gts, strict=True)):
        d = _parse_details(it.answer)
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


def score_strings_batch(
    items: list[Item],
    *,
    settings: EvalSettings | None = None,
    exec_settings: ExecSettings | None = None,
) -> list[list[ScoreResult]]:
    """Exact-match code scores, default and FIND-compatible, for many answers."""
    s = settings or EvalSettings()
    jobs: list[CodeJob] = []
    pairs: list[list[tuple[str, str]] | str] = []  # the pairs, or why the unit tests are unusable
    for k, it in enumerate(items):
        try:
            p = st.correct_pairs(it.target.unit_tests)
        except (ValueError, IndexError) as e:
            pairs.append(str(e))
            continue
        pairs.append(p)
        if it.answer.code.strip() and it.answer.func_name:
            for call in ("direct", "find-compat"):
                jobs.append(
                    CodeJob(
                        id=f"{k}:{call}",
                        code=it.answer.code,
                        func_name=it.answer.func_name,
                        kind="string",
                        call=call,
                        inputs=[i for i, _ in p],
                    )
                )
    results = {r.id: r for r in run_code_jobs(jobs, limits=s.limits(), settings=exec_settings)}
    out = []
    for k, (it, p) in enumerate(zip(items, pairs, strict=True)):
        d = _parse_details(it.answer)
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


_CODE_SCORERS = {"numeric": score_numeric_batch, "strings": score_strings_batch}

_CEILING_CACHE: dict[tuple[str, str, str, str, int], list[ScoreResult]] = {}


async def _judge_scores(
    target: Target, description: str, parser: str, judge_settings: JudgeSettings
) -> list[ScoreResult]:
    family = target.family
    if family not in ("strings", "entities", "relations"):
        return []
    try:
        judge: JudgeClient = make_judge(judge_settings)
    except JudgeError as e:
        configured = not isinstance(e, JudgeNotConfigured)
        return [
            ScoreResult(
                metric=m,
                status="error",
                error_category="judge",
                error=str(e),
                details={"judge_configured": configured},
            )
            for m in ("unit_test", "unit_test_strict")
        ]
    try:
        mode = await judge.mode()
        template, _ = load_template(family)
        ceiling_tests = target.unit_tests[: judge_settings.ceiling_tests]
        key = (
            target.id,
            judge.model,
            prompt_hash(SYSTEM_PROMPT, template),
            mode,
            len(ceiling_tests),
        )
        jobs = [Job(description, target.unit_tests)]
        if judge_settings.ceiling and key not in _CEILING_CACHE:
            # the ceiling's triplets go with the agent's (forced choice: in the same batch)
            jobs.append(Job(target.hidden.description, ceiling_tests, "unit_test_ceiling"))
        sem = asyncio.Semaphore(judge_settings.concurrency)
        t0 = time.perf_counter()
        results = await judge_jobs(judge, family, jobs, semaphore=sem)
        wall = round(time.perf_counter() - t0, 3)
        scores = results[0]
        for r in scores:
            r.details["parser"] = parser
            r.details["judge_wall_s"] = wall  # all of this episode's judge calls, ceiling included
        if len(results) > 1:
            ceiling = results[1]
            # never cache an error: the next episode retries it
            if all(r.status == "ok" for r in ceiling):
                _CEILING_CACHE[key] = ceiling
            scores += ceiling
        elif judge_settings.ceiling:
            scores += [r.model_copy(deep=True) for r in _CEILING_CACHE[key]]
        return scores
    finally:
        await judge.aclose()


async def score_episode(
    target: Target,
    final_answer: str,
    stats: EpisodeStats,
    *,
    settings: EvalSettings | None = None,
    judge_settings: JudgeSettings | None = None,
    exec_settings: ExecSettings | None = None,
) -> list[ScoreResult]:
    """All scores of one finished episode. Errors are returned as error states, never raised."""
    s = settings or EvalSettings()
    js = judge_settings or JudgeSettings()
    parsed = parse_answer(final_answer or "", s.parser)
    if target.family == "neurons":
        from evaluator.neurons.scoring import score_neuron_episode

        return await score_neuron_episode(target, parsed.description or "")
    if target.family == "ravel":
        from evaluator.ravel.agent_task import score_ravel_episode

        return await score_ravel_episode(target, final_answer or "")
    results: list[ScoreResult] = []
    code_batch = _CODE_SCORERS.get(target.family)
    try:
        if code_batch is not None:
            extra = {}
            call = target_call.get()
            if target.family == "numeric" and call is not None:
                extra["ground_truths"] = [await _ground_truth_via(call, target)]
            (results,) = await asyncio.to_thread(
                code_batch, [Item(target, parsed)], settings=s, exec_settings=exec_settings, **extra
            )
        results += await _judge_scores(target, parsed.description, parsed.parser, js)
    except Exception as e:  # a bug or an unexpected failure: an infrastructure error state
        results.append(
            ScoreResult(
                metric="evaluator",
                status="error",
                error_category="infrastructure",
                error=f"{type(e).__name__}: {e}",
            )
        )
    for r in results:
        r.details.setdefault("target_calls", stats.target_calls)
        r.details.setdefault("inputs", stats.inputs)
    return results
