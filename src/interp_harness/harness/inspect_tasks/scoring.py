"""The Inspect scorer of our tasks: the harness's own scorers (`interp_harness.evaluator.scoring.score_episode`)
on a sample's final answer, with the judge as Inspect's model role `grader`.

- Registered as `interp_harness/interp_harness_scorer` (a factory taking the task's families);
  its scores are named `interp_harness` in logs.
- `Score.value`: {metric: float} of every ok finite metric, plus NaN (Inspect's "unscored") for a
  report-row metric the sample has no value for (e.g. domain IoU of an uncorrupted function):
  Inspect needs every metric key in every sample's dict.
- `Score.metadata`: every ScoreResult (details through the API's allow-list, so no ground truth)
  and the sample's usage counters.
- A scoring error (an error state of a metric the family's report rows use, a scorer-wide
  failure, the judge down) raises: Inspect records a scorer error on the sample, never a 0.
- Metrics per report row of the families (`interp_harness.evaluator.report.report_rows`), keyed by the row's
  metric: `interp_harness/mean`, `interp_harness/ci_low`, `interp_harness/ci_high`, the 95%
  interval computed by the report's own `interp_harness.evaluator.report.interval` (Wilson / Student-t).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import mean as _mean
from typing import Any

from inspect_ai._util.registry import RegistryInfo, registry_tag
from inspect_ai.log import Transcript, transcript
from inspect_ai.log._transcript import init_transcript
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target
from inspect_ai.scorer._metric import metric_register
from inspect_ai.scorer._scorer import SCORER_METRICS, scorer_register
from inspect_ai.solver import TaskState
from inspect_ai.util import store as sample_store

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.judge import (
    JudgeClient,
    JudgeError,
    JudgeReply,
    JudgeSettings,
    make_judge,
)
from interp_harness.evaluator.report import interval, report_rows
from interp_harness.evaluator.scorer import scorer_for
from interp_harness.evaluator.scoring import ScoringContext, score_episode
from interp_harness.function_store.benchmark import Benchmark, benchmark, benchmarks
from interp_harness.harness.inspect_tasks.keys import (
    ANSWER,
    INPUTS,
    ROUNDS,
    TARGET_CALLS,
    tagged,
)
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.runs.views import public_details
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

NAME = "interp_harness/interp_harness_scorer"  # the factory's registry name (the contract's)
LOG_NAME = "interp_harness/interp_harness"  # its instances: scores named "interp_harness"
GRADER = "grader"  # the Inspect model role of the judge
WHOLE = ("evaluator", "scoring")  # metrics of a scorer-wide failure


class ScoringFailed(RuntimeError):
    """A sample could not be scored (raised so that Inspect records a scorer error)."""


# --- the judge as Inspect's model role `grader` ---------------------------------------------


class InspectGraderJudge(JudgeClient):
    """The evaluator's judge interface over an Inspect model (the `grader` role). A subclass of
    `JudgeClient`, not a new interface: the families' scorers (unit tests, neuron probes) take a
    JudgeClient, and the evaluator must not import Inspect (layer rule). Generate mode only (FIND's:
    the verdict is read from the reply); Inspect models have no forced choice."""

    def __init__(self, model: Model, settings: JudgeSettings) -> None:
        self._model = model
        self.model = str(model)  # "provider/name": the ceiling cache and the details key on it
        # FIND's settings (temperature 0, short replies); retries and timeout from the role's
        # own config when it sets them, else the operator's HARNESS_JUDGE_* ones
        cfg = model.config
        self._config = GenerateConfig(
            temperature=0,
            max_tokens=settings.max_tokens,
            max_retries=cfg.max_retries if cfg.max_retries is not None else settings.max_retries,
            timeout=cfg.timeout if cfg.timeout is not None else int(settings.timeout_s),
        )

    async def complete(self, system: str, user: str) -> JudgeReply:
        # The judge reads ground truth (the unit tests' examples; the true description for the
        # ceiling), so its calls must not land in the sample's transcript, which the log keeps:
        # they go to a detached transcript (usage is still counted for the role).
        sample_transcript = transcript()
        init_transcript(Transcript())  # this task's context only (asyncio copies it per task)
        try:
            out = await self._model.generate(
                [ChatMessageSystem(content=system), ChatMessageUser(content=user)],
                config=self._config,
            )
        except Exception as e:  # provider errors of any kind: the judge is down
            cause = _last_error(e)
            raise JudgeError(f"grader {self.model} failed: {type(cause).__name__}: {cause}") from e
        finally:
            init_transcript(sample_transcript)
        if out.error:
            raise JudgeError(f"grader {self.model} failed: {out.error}")
        if not out.choices:  # no reply at all; an empty text is the judge's answer (as FIND)
            raise JudgeError(f"grader {self.model} gave no reply")
        return JudgeReply(text=out.completion, model=out.model or self.model)


def _last_error(e: BaseException) -> BaseException:
    """The provider's own error inside Inspect's retry wrapper (tenacity's RetryError)."""
    last = getattr(e, "last_attempt", None)
    inner = last.exception() if last is not None and hasattr(last, "exception") else None
    return inner if isinstance(inner, BaseException) else e


def judge_factory() -> Callable[[JudgeSettings], JudgeClient]:
    """The grader role when the eval binds one (`--model-role grader=...`), else the operator's
    judge setting (HARNESS_JUDGE_*, `interp_harness.evaluator.judge.make_judge`)."""
    if GRADER not in model_roles():
        return make_judge
    model = get_model(role=GRADER)
    return lambda settings: InspectGraderJudge(model, settings)


# --- metrics: the report's rows -----------------------------------------------------------


def _values(scores: list[SampleScore]) -> list[float]:
    out = []
    for s in scores:
        v = s.score.value
        if isinstance(v, int | float) and not math.isnan(v):
            out.append(float(v))
    return out


def _method(values: list[float], method: str) -> str:
    # as the report: a reduced (epoch-mean) success that is not 0/1 is a per-target rate
    if method == "wilson" and any(v not in (0.0, 1.0) for v in values):
        return "t"
    return method


def _interval_metric(side: int) -> Callable[[str], Metric]:
    def factory(method: str = "t") -> Metric:
        def metric(scores: list[SampleScore]) -> float:
            values = _values(scores)
            ci = interval(values, _method(values, method))
            return ci[side] if ci else math.nan

        return metric

    return factory


def mean_metric() -> Metric:
    def metric(scores: list[SampleScore]) -> float:
        values = _values(scores)
        return _mean(values) if values else math.nan

    return metric


ci_low_metric = _interval_metric(0)
ci_high_metric = _interval_metric(1)


def _register_metric(factory: Callable[..., Metric], name: str) -> Callable[..., Metric]:
    """`factory` registered under `name` exactly (Inspect's `@metric` would prefix the package
    of this module when installed); its instances carry the name and their arguments, so the log
    records them and `inspect score` can re-create them."""

    def make(*args: Any, **kwargs: Any) -> Metric:
        m = factory(*args, **kwargs)
        registry_tag(factory, m, RegistryInfo(type="metric", name=name), *args, **kwargs)
        return m

    return metric_register(make, name)


mean = _register_metric(mean_metric, "interp_harness/mean")
ci_low = _register_metric(ci_low_metric, "interp_harness/ci_low")
ci_high = _register_metric(ci_high_metric, "interp_harness/ci_high")


def _records(families: Sequence[str] | None) -> list[Benchmark]:
    return [benchmark(f) for f in families] if families else benchmarks()


def row_methods(records: list[Benchmark]) -> dict[str, str]:
    """Metric -> interval method of the families' report rows; a family without report rows
    (neurons, RAVEL) gets its scorer's declared metrics with Student-t intervals."""
    out: dict[str, str] = {}
    for b in records:
        rows = [(m, how) for _, _, m, how, _ in report_rows([b])]
        if not rows and b.scorer:
            rows = [(m, "t") for m in scorer_for(b.family).metrics]
        for m, how in rows:
            if out.setdefault(m, how) != how:
                raise ValueError(f"metric {m!r} has two interval methods in these families")
    return out


def scorer_metrics(families: Sequence[str] | None = None) -> dict[str, list[Metric]]:
    """The metrics of the scorer for `families` (all registered ones when None)."""
    return {
        m: [mean(), ci_low(method=how), ci_high(method=how)]
        for m, how in row_methods(_records(families)).items()
    }


# --- the scorer -------------------------------------------------------------------------


def _stats() -> EpisodeStats:
    st = sample_store()
    return EpisodeStats(
        target_calls=int(st.get(TARGET_CALLS, 0)),
        inputs=int(st.get(INPUTS, 0)),
        rounds=int(st.get(ROUNDS, 0)),
        exemplar_init=False,
    )


def _answer(state: TaskState) -> str:
    stored = sample_store().get(ANSWER)
    return stored if isinstance(stored, str) else state.output.completion


def _result_out(r: ScoreResult) -> dict[str, Any]:
    return r.model_dump(exclude={"details"}) | {"details": public_details(r.details)}


def to_score(
    results: list[ScoreResult], answer: str, stats: EpisodeStats, needed: set[str]
) -> Score:
    """The Inspect Score of one sample's ScoreResults; raises ScoringFailed on a scoring error
    of a metric in `needed` (the report rows') or of the scorer as a whole."""
    failed = [
        r for r in results if r.status == "error" and (r.metric in needed or r.metric in WHOLE)
    ]
    if failed:
        text = "; ".join(f"{r.metric}: {r.error_category or 'error'}: {r.error}" for r in failed)
        raise ScoringFailed(tagged(failed[0].error_category, text))
    value: dict[str, float] = {m: math.nan for m in sorted(needed)}
    for r in results:
        if r.status == "ok" and r.value is not None and math.isfinite(r.value):
            value[r.metric] = float(r.value)
    return Score(
        value=value,  # type: ignore[arg-type]
        answer=answer,
        metadata={
            "scores": [_result_out(r) for r in results],
            "stats": stats.model_dump(include={"target_calls", "inputs", "rounds"}),
        },
    )


def interp_harness_scorer(families: list[str] | None = None) -> Scorer:
    """The harness's scorers for `families` (all registered families when None), their judge
    the `grader` role (default: HARNESS_JUDGE_*), with the report's metrics and intervals."""
    metrics = scorer_metrics(families)
    needed = set(metrics)

    async def score(state: TaskState, target: Target) -> Score:
        res = resources()
        tgt = res.target(str(state.sample_id))
        answer = _answer(state)
        stats = _stats()
        ctx = ScoringContext(
            call_target=res.call, code_runner=run_in_sandbox, judge_factory=judge_factory()
        )
        results = await score_episode(tgt, answer, stats, ctx)
        return to_score(results, answer, stats, needed)

    registry_tag(
        interp_harness_scorer,
        score,
        RegistryInfo(type="scorer", name=LOG_NAME, metadata={SCORER_METRICS: metrics}),
        families=families,
    )
    return score


def _alias(families: list[str] | None = None) -> Scorer:
    """The name instances carry, registered too: `inspect score` re-creates the scorer by it."""
    return interp_harness_scorer(families)


scorer_register(interp_harness_scorer, name=NAME, metadata={SCORER_METRICS: []})
scorer_register(_alias, name=LOG_NAME, metadata={SCORER_METRICS: []})
