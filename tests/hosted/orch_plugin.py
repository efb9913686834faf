"""Test plugin for the orchestrator tests (loaded with HARNESS_PLUGINS=orch_plugin).

It registers a small dataset `orch-test` whose targets are affine maps f(x) = a*x + b (numeric)
and word-length scorers (entities, with exemplars), deterministic agents loadable by dotted path,
and score hooks. Every target call is appended to $ORCH_TEST_CALL_LOG when set, so tests can count
real executions independently of the store.
"""

from __future__ import annotations

import json
import os

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.function_store.catalog import CatalogOptions, register_source
from interp_harness.function_store.models import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    Target,
    make_canary,
)
from interp_harness.function_store.runtime import register_runner

AFFINE = [(2.0, 1.0), (-3.0, 0.5), (0.5, -4.0), (1.0, 10.0), (4.0, 0.0), (-1.0, -1.0)]
DIR = "./temp/function.py"


def _affine_target(i: int, a: float, b: float) -> Target:
    tid = f"orch-test/numeric/f{i:05d}"
    return Target(
        id=tid,
        dataset="orch-test",
        family="numeric",
        variant="clean",
        public=PublicMeta(input_kind="number", prompt_family="numeric", value_range=(-128, 128)),
        hidden=HiddenTruth(
            runner="orchtest-affine",
            spec={"a": a, "b": b},
            description=f"{a}*x+{b}",
            canary=make_canary(tid),
        ),
    )


def _entity_target(i: int) -> Target:
    tid = f"orch-test/entities/f{i:05d}"
    return Target(
        id=tid,
        dataset="orch-test",
        family="entities",
        variant="atomic",
        public=PublicMeta(input_kind="word", prompt_family="neurons_entities"),
        hidden=HiddenTruth(runner="orchtest-length", spec={}, canary=make_canary(tid)),
        exemplars=["Paris", "L\u00f3pez Obrador", "dog"],
    )


@register_source("orch-test")
def load(family: str, options: CatalogOptions) -> list[Target]:
    if family == "numeric":
        return [_affine_target(i, a, b) for i, (a, b) in enumerate(AFFINE)]
    if family == "entities":
        return [_entity_target(i) for i in range(2)]
    return []


def _log(target_id: str, inputs: list[str]) -> None:
    path = os.environ.get("ORCH_TEST_CALL_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"target": target_id, "inputs": inputs}) + "\n")


class _Affine:
    def __init__(self, target: Target) -> None:
        self.id, self.a, self.b = target.id, target.hidden.spec["a"], target.hidden.spec["b"]

    def call(self, inputs: list[str]) -> list[CallOutput]:
        _log(self.id, list(inputs))
        out = []
        for x in inputs:
            try:
                out.append(CallOutput(input=x, output=str(self.a * float(x) + self.b)))
            except ValueError:
                out.append(CallOutput(input=x, error="could not convert string to float"))
        return out


class _Length:
    def __init__(self, target: Target) -> None:
        self.id = target.id

    def call(self, inputs: list[str]) -> list[CallOutput]:
        _log(self.id, list(inputs))
        return [CallOutput(input=x, output=str(min(1.0, len(x) / 10))) for x in inputs]


@register_runner("orchtest-affine")
def _affine_runner(target, ctx):  # type: ignore[no-untyped-def]
    return _Affine(target)


@register_runner("orchtest-length")
def _length_runner(target, ctx):  # type: ignore[no-untyped-def]
    return _Length(target)


# ---- agents (in orch_agents; re-exported for in-process use) -------------------------------
from orch_agents import (  # noqa: E402, F401
    EchoAgent,
    FailingAgent,
    ProbeAgent,
    SilentAgent,
    SlowProviderAgent,
    TwoCommandsAgent,
    ZeroLatencyAgent,
)


# ---- score hooks ----------------------------------------------------------------------------
async def score_hook(
    target: Target, final_answer: str, stats: EpisodeStats, ctx: object = None
) -> list[ScoreResult]:
    """Deterministic stand-in for the evaluator: did the agent answer, and how many calls."""
    return [
        ScoreResult(metric="answered", value=1.0 if "[DESCRIPTION]" in final_answer else 0.0),
        ScoreResult(
            metric="calls", value=float(stats.target_calls), details={"rounds": stats.rounds}
        ),
    ]


async def failing_hook(
    target: Target, final_answer: str, stats: EpisodeStats, ctx: object = None
) -> list[ScoreResult]:
    raise RuntimeError("judge endpoint unreachable")
