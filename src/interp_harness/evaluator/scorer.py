"""The evaluator's side of a benchmark unit: a `Scorer` per family and the `ScoringContext` it runs in.

A family's record names its scorer (`Benchmark.scorer`, `module:attr`, a `Scorer` class or
instance); `scorer_for(family)` loads it. Everything a scorer needs from outside the evaluator is
in the context the caller builds and passes in, never fetched by the scorer itself:
- `call_target`: the episode's (sandboxed) target client, for ground truth read from a target;
- `code_runner`: the sandbox agent-written code runs in (an interface this layer owns);
- the judge's settings and the factory that makes a judge client from them;
- the intervention service's URL (None: the operator's HARNESS_INTERVENTION_URL);
- the simulator's settings (`HARNESS_SIMULATOR_*`) and the factory that makes a simulator;
- `EvalSettings` (`HARNESS_EVAL_*`) and `ExecSettings` (sandbox backend, chunking).
A missing part is an error state of the scores that need it, never a silent in-process fallback.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic_settings import BaseSettings, SettingsConfigDict

from interp_harness.evaluator.answer_bounds import too_long
from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.judge import JudgeClient, JudgeSettings, make_judge
from interp_harness.evaluator.parsing import ParsedAnswer, ParserName
from interp_harness.evaluator.sandbox_exec import (
    CodeJob,
    CodeLimits,
    CodeResult,
    CodeRunner,
    ExecSettings,
    run_code_jobs,
)
from interp_harness.evaluator.simulation.simulator import (
    Simulator,
    SimulatorSettings,
    make_simulator,
)
from interp_harness.function_store.benchmark import benchmark, load_ref
from interp_harness.function_store.models import Target

# (target id, inputs) -> the target's CallOutputs, through the orchestrator's target client
TargetCall = Callable[[str, Sequence[str]], Awaitable[list[Any]]]

NMSE_THRESHOLD = 0.1  # FIND's success threshold on a function's NMSE (its Table 2)


class EvalSettings(BaseSettings):
    """`HARNESS_EVAL_*`: scoring options."""

    model_config = SettingsConfigDict(env_prefix="HARNESS_EVAL_")

    parser: ParserName = "tolerant"
    nmse_threshold: float = NMSE_THRESHOLD
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
    """One answer to score in a batch."""

    target: Target
    answer: ParsedAnswer


class NoTargetClient(RuntimeError):
    """The scoring context has no target client: ground truth cannot be read."""


@dataclass(frozen=True)
class ScoringContext:
    """What scoring may use, passed in by the caller (the orchestrator, a tool, a test)."""

    call_target: TargetCall | None = None
    code_runner: CodeRunner | None = None
    settings: EvalSettings = field(default_factory=EvalSettings)
    exec_settings: ExecSettings | None = None
    judge_settings: JudgeSettings = field(default_factory=JudgeSettings)
    judge_factory: Callable[[JudgeSettings], JudgeClient] = make_judge
    intervention_url: str | None = None  # None: HARNESS_INTERVENTION_URL (operator)
    simulator_settings: SimulatorSettings = field(default_factory=SimulatorSettings)
    simulator_factory: Callable[[SimulatorSettings], Simulator] = make_simulator

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[Any]:
        if self.call_target is None:
            raise NoTargetClient("no target client in the scoring context")
        return await self.call_target(target_id, inputs)

    def run_code(self, jobs: Sequence[CodeJob]) -> list[CodeResult]:
        """Agent code in the scoring sandbox; without a runner, every job is an infrastructure
        error (never run unsandboxed)."""
        return run_code_jobs_with(self.code_runner, jobs, self.settings, self.exec_settings)

    def judge(self) -> JudgeClient:
        """A judge client of the context's settings (raises JudgeError when none is configured)."""
        return self.judge_factory(self.judge_settings)

    def simulator(self) -> Simulator:
        """The simulator of the context's settings (the lexical one when no URL is set)."""
        return self.simulator_factory(self.simulator_settings)

    def code_batch(
        self, batch: Callable[..., list[list[ScoreResult]]], items: list[Item], **extra: Any
    ) -> list[list[ScoreResult]]:
        """A family's batch of code scores (`score_<family>_batch(items, runner=, settings=,
        exec_settings=, ...)`) run with this context's runner and settings."""
        return batch(
            items,
            runner=self.code_runner,
            settings=self.settings,
            exec_settings=self.exec_settings,
            **extra,
        )

    async def code_scores(
        self, batch: Callable[..., list[list[ScoreResult]]], item: Item, **extra: Any
    ) -> list[ScoreResult]:
        """One answer's code scores through `batch`, in a worker thread (sandboxes block)."""
        (scores,) = await asyncio.to_thread(self.code_batch, batch, [item], **extra)
        return scores


def run_code_jobs_with(
    runner: CodeRunner | None,
    jobs: Sequence[CodeJob],
    settings: EvalSettings,
    exec_settings: ExecSettings | None,
) -> list[CodeResult]:
    """`run_code_jobs` through `runner`; with none, each job is an infrastructure error."""
    if runner is None:
        return [
            CodeResult(id=j.id, status="infrastructure", reason="no code runner given to scoring")
            for j in jobs
        ]
    return run_code_jobs(jobs, runner=runner, limits=settings.limits(), settings=exec_settings)


class Scorer(ABC):
    """One family's scoring. `score` never raises for an expected failure: an error is a state."""

    # metrics this scorer produces (for listings and docs)
    metrics: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        """All scores of one finished episode."""

    def score_batch(self, items: list[Item], ctx: ScoringContext) -> list[list[ScoreResult]]:
        """Many parsed answers at once (benchmarks, offline re-scoring: one sandbox start per
        chunk); one result list per item. Optional: families whose scoring batches (numeric,
        strings) override it; the others refuse, which callers of a batch API must see."""
        raise NotImplementedError(f"{type(self).__name__} scores one episode at a time")


_SCORERS: dict[str, Scorer] = {}
_lock = threading.Lock()


def scorer_for(family: str) -> Scorer:
    """The family's registered scorer (a class in the record is instantiated once)."""
    with _lock:
        found = _SCORERS.get(family)
        if found is None:
            ref = benchmark(family).scorer
            if not ref:
                raise LookupError(f"family {family!r} declares no scorer")
            obj = load_ref(ref)
            found = obj() if isinstance(obj, type) else obj
            if not isinstance(found, Scorer):
                raise TypeError(f"{ref} is not an interp_harness.evaluator.scorer.Scorer")
            _SCORERS[family] = found
        return found


ScorePart = Callable[[], Awaitable[list[ScoreResult]]]


async def score_parts(parts: Sequence[ScorePart], stats: EpisodeStats) -> list[ScoreResult]:
    """Run a scorer's parts in order (e.g. code, then judge). An unexpected failure ends the
    parts with an infrastructure error state beside what the earlier parts scored; every score
    carries the episode's usage."""
    results: list[ScoreResult] = []
    try:
        for part in parts:
            results += await part()
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


def refused_code(items: Sequence[Item]) -> dict[str, CodeResult]:
    """The answers whose code is longer than code scoring reads (answer_bounds), by item index,
    as failed results with the reason: the agent's score, the failure value; never sandboxed."""
    out = {}
    for k, it in enumerate(items):
        if why := too_long(it.answer.code, "code", "code"):
            out[str(k)] = CodeResult(id=str(k), status="error", reason=why.reason)
    return out


def parse_details(parsed: ParsedAnswer) -> dict[str, Any]:
    return {"parser": parsed.parser, "func_name": parsed.func_name, "code_chars": len(parsed.code)}
