"""Test targets (a runner registered through the public registry that prints FIND's str()
values) and episode summaries for report tests."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from interp_harness.evaluator.api import EpisodeStats, EpisodeSummary, ScoreResult
from interp_harness.function_store.models import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    Target,
    UnitTest,
)
from interp_harness.function_store.runtime import register_runner

_FUNCS: dict[str, Callable[[float], object]] = {}


class _FnRunner:
    def __init__(self, fn: Callable[[float], object]) -> None:
        self.fn = fn

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        out = []
        for x in inputs:
            try:
                out.append(CallOutput(input=x, output=str(self.fn(float(x)))))
            except Exception as e:  # FIND's CLI prints None on an exception
                out.append(CallOutput(input=x, output="None", error=type(e).__name__))
        return out


@register_runner("evaltest-fn")
def _factory(target: Target, ctx: object) -> _FnRunner:
    return _FnRunner(_FUNCS[target.hidden.spec["fn"]])


def numeric_target(
    name: str, fn: Callable[[float], object], corruption: dict | None = None
) -> Target:
    _FUNCS[name] = fn
    return Target(
        id=f"test/numeric/{name}",
        dataset="test",
        family="numeric",
        variant="corrupted" if corruption else "clean",
        public=PublicMeta(input_kind="number", prompt_family="numeric", value_range=(-128, 128)),
        hidden=HiddenTruth(
            runner="evaltest-fn", spec={"fn": name}, description=name, corruption=corruption
        ),
    )


def string_target(
    pairs: list[tuple[str, str]], description: str = "", family: str = "strings"
) -> Target:
    """Unit tests whose correct item (1-based index cycling 1,2,3) is each given pair."""
    tests = []
    for k, (i, o) in enumerate(pairs):
        c = k % 3 + 1
        ins, outs = ["d1", "d2", "d3"], ["x1", "x2", "x3"]
        ins[c - 1], outs[c - 1] = i, o
        tests.append(UnitTest(inputs=ins, outputs=outs, correct=c))
    return Target(
        id="test/strings/f0",
        dataset="test",
        family=family,  # type: ignore[arg-type]
        variant="atomic",
        public=PublicMeta(input_kind="string", prompt_family="strings"),
        hidden=HiddenTruth(runner="evaltest-none", description=description),
        unit_tests=tests,
    )


GRID = [i + 0.5 for i in range(-128, 128)]


def nmse_by_hand(g: Callable[[float], float], t: Callable[[float], float]) -> float:
    num = sum(abs(g(x) - t(x)) ** 2 for x in GRID if math.isfinite(abs(g(x))))
    den = sum(abs(g(x)) ** 2 for x in GRID if math.isfinite(abs(g(x))))
    return num / den


def in_process_calls(*targets: Target):  # type: ignore[no-untyped-def]
    """A target client that runs the given targets in this process (tests only)."""
    from interp_harness.function_store.runtime import build_runner

    by_id = {t.id: t for t in targets}

    async def call(target_id: str, inputs: Sequence[str]) -> list:
        return build_runner(by_id[target_id]).call(list(inputs))

    return call


def local_ctx(*targets: Target, **options: object):  # type: ignore[no-untyped-def]
    """A scoring context as the orchestrator builds it, with the targets run in this process."""
    from interp_harness.evaluator.scorer import ScoringContext
    from interp_harness.harness.sandbox.code_runner import run_in_sandbox

    return ScoringContext(
        call_target=in_process_calls(*targets), code_runner=run_in_sandbox, **options
    )


def summary(
    i: int,
    agent: str,
    scores: Sequence[ScoreResult] = (),
    *,
    family: str = "numeric",
    calls: int = 2,
    inputs: int = 10,
    **fields: object,
) -> EpisodeSummary:
    """Episode `i` of `agent` as a report reads it: completed, on target `t{i}` of find-gen's
    clean `family`, with these scores and call counts; `fields` set any other field."""
    return EpisodeSummary.model_validate(
        {
            "episode_id": f"{agent}{i}",
            "target_id": f"t{i}",
            "dataset": "find-gen",
            "family": family,
            "variant": "clean",
            "agent": agent,
            "status": "completed",
            "stats": EpisodeStats(target_calls=calls, inputs=inputs),
            "scores": list(scores),
            **fields,
        }
    )
