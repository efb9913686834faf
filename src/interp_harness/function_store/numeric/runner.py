"""Runners for numeric targets, registered with `interp_harness.function_store.runtime`.

- `numeric-v1`: released FIND semantics (quirks kept), `numeric-gen`: find-gen's fixed semantics.
- `mlp-v1`: released MLP weights; `mlp-gen`: weights trained (or read from the cache) at first call.

Each input is parsed with Python's `float()`, as FIND's CLI does, and the output text is Python's
`str()` of the value (`None` where the released function raises). Deviation from FIND, on purpose:
a non-numeric input gives an error for that input only; FIND's CLI crashes and prints nothing for
the whole call (`float(arg)` sits outside its try).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from interp_harness.function_store.formatting import format_value
from interp_harness.function_store.numeric.expr import Program
from interp_harness.function_store.numeric.families import clean_program
from interp_harness.function_store.numeric.mlp import (
    MLPWeights,
    TrainResult,
    find_v1_weights_path,
    load_torch_weights,
    missing_weights_reason,
    trained_weights,
)
from interp_harness.function_store.numeric.variants import served_program
from interp_harness.function_store.runtime import TargetUnavailable, register_preparer
from interp_harness.sdk import CallOutput, RuntimeContext, Target, register_runner


def parse_number(text: str) -> float:
    """FIND's `float(arg)`; raises ValueError with a readable message."""
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError(
            f"not a number: {text!r} (numeric targets take inputs Python's float() accepts, "
            "e.g. 3, -2.5, 1e3)"
        ) from None


def _rng(ctx: RuntimeContext) -> np.random.RandomState:
    # None: fresh OS entropy, a new draw every call like FIND; a seed makes calls reproducible
    return np.random.RandomState(ctx.seed)


def program_for(target: Target) -> Program:
    """The served program of a non-MLP numeric target."""
    spec = target.hidden.spec
    release = target.hidden.runner == "numeric-v1"
    noise = (spec.get("noise") or {}).get("type")
    return served_program(
        spec["function"], noise=noise, corruption=spec.get("corruption"), release=release
    )


def true_function(spec: dict[str, Any]) -> Any:
    """The clean mathematical function (bias kept, square wave intact), vectorised over arrays.

    This is what the MLPs approximate and what corruption means are taken over
    (FIND's `train_functions.py` and `sample_corruption` both use the clean f).
    """
    program = clean_program(spec["function"], release=False)
    rng = np.random.RandomState(0)  # unused: clean programs draw nothing

    def f(x: Any) -> Any:
        return program.evaluate(np.asarray(x, dtype=float), rng)

    return f


class _Base(ABC):
    @abstractmethod
    def value(self, x: float) -> Any: ...

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        outs: list[CallOutput] = []
        for raw in inputs:
            try:
                x = parse_number(raw)
            except ValueError as e:
                outs.append(CallOutput(input=raw, error=str(e)))
                continue
            outs.append(CallOutput(input=raw, output=self._text(x)))
        return outs

    def _text(self, x: float) -> str:
        return format_value(self.value(x))


class ProgramRunner(_Base):
    def __init__(self, program: Program, rng: np.random.RandomState) -> None:
        self.program = program
        self.rng = rng

    def value(self, x: float) -> Any:
        """The raw value `function(x)` returns (raises where the released function raises)."""
        return self.program.evaluate(x, self.rng)

    def _text(self, x: float) -> str:
        try:
            return format_value(self.value(x))
        except Exception:  # the released CLI's bare `except: out = 'None'`
            return "None"


class MLPRunner(_Base):
    def __init__(self, weights: MLPWeights) -> None:
        self.weights = weights

    def value(self, x: float) -> float:
        return self.weights.value(x)


class LazyMLPRunner(_Base):
    """find-gen MLP: trains (or reads the cached weights) on first use, never while cataloguing."""

    def __init__(self, target: Target, device: str | None = None) -> None:
        self.target = target
        self.device = device
        self._weights: MLPWeights | None = None

    def ensure(self) -> TrainResult:
        result = train_mlp_for(self.target, device=self.device)
        self._weights = result.weights
        return result

    def value(self, x: float) -> float:
        if self._weights is None:
            self.ensure()
        assert self._weights is not None
        return self._weights.value(x)


def train_mlp_for(target: Target, device: str | None = None) -> TrainResult:
    """Train (or load from the cache) the MLP of a find-gen MLP target."""
    spec = target.hidden.spec
    mlp = spec.get("mlp") or {}
    if "epochs" not in mlp or "seed" not in mlp:
        raise ValueError(f"{target.id} is not a find-gen MLP target (no mlp epochs/seed)")
    return trained_weights(
        spec["function"],
        true_function(spec),
        spec["domain"],
        epochs=int(mlp["epochs"]),
        seed=int(mlp["seed"]),
        device=device,
    )


@register_runner("numeric-v1")
def _numeric_v1(target: Target, ctx: RuntimeContext) -> ProgramRunner:
    return ProgramRunner(program_for(target), _rng(ctx))


@register_runner("numeric-gen")
def _numeric_gen(target: Target, ctx: RuntimeContext) -> ProgramRunner:
    return ProgramRunner(program_for(target), _rng(ctx))


def _with_weights(target: Target, weights: MLPWeights) -> Target:
    spec = dict(target.hidden.spec)
    spec["mlp"] = {**(spec.get("mlp") or {}), "weights": weights.to_lists()}
    return target.model_copy(update={"hidden": target.hidden.model_copy(update={"spec": spec})})


def _embedded(target: Target) -> MLPWeights | None:
    w = (target.hidden.spec.get("mlp") or {}).get("weights")
    return MLPWeights.from_lists(w) if w else None


@register_preparer("mlp-v1")
def _prepare_mlp_v1(target: Target) -> Target:
    if _embedded(target) is not None:
        return target
    return _with_weights(target, _mlp_v1(target, RuntimeContext()).weights)


@register_preparer("mlp-gen")
def _prepare_mlp_gen(target: Target) -> Target:
    # Training happens here, in the orchestrator, before the target enters a sandbox: a call
    # must never pay for it (it would run past the per-call time limit).
    if _embedded(target) is not None:
        return target
    return _with_weights(target, train_mlp_for(target).weights)


@register_runner("mlp-v1")
def _mlp_v1(target: Target, ctx: RuntimeContext) -> MLPRunner:
    if (w := _embedded(target)) is not None:
        return MLPRunner(w)
    mlp = target.hidden.spec.get("mlp") or {}
    fdir = mlp.get("dir", target.id.rsplit("/", 1)[-1])
    path = mlp.get("weights_path")
    if not path or not Path(path).is_file():
        found = find_v1_weights_path(fdir)
        if found is None:
            raise TargetUnavailable(missing_weights_reason(fdir))
        path = str(found)
    return MLPRunner(load_torch_weights(str(path)))


@register_runner("mlp-gen")
def _mlp_gen(target: Target, ctx: RuntimeContext) -> MLPRunner | LazyMLPRunner:
    if (w := _embedded(target)) is not None:
        return MLPRunner(w)
    return LazyMLPRunner(target, device=ctx.extra.get("mlp_device"))
