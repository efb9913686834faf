"""Turning a target's hidden spec into something that answers calls.

Runners are registered by name (`HiddenTruth.runner`); the modules that define them are imported
lazily so that the target service only pays for the kinds it serves.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from interp_harness.function_store.benchmark import benchmarks
from interp_harness.function_store.models import CallOutput, Target


class TargetUnavailable(RuntimeError):
    """The target cannot be served here (e.g. its MLP weights are not present)."""


class RunnerMissing(LookupError):
    """No installed benchmark registers the target's runner where this code runs (a plugin
    installed beside the orchestrator but not in the target service's environment)."""


class NoBackboneConfigured(RuntimeError):
    """A neural-module target was called but no LM backbone endpoint is configured."""

    def __init__(
        self,
        msg: str = "no backbone configured: set HARNESS_BACKBONE_URL to an "
        "OpenAI-compatible endpoint (e.g. `harness backbone serve`)",
    ) -> None:
        super().__init__(msg)


class Runner(Protocol):
    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        """Evaluate the target on each input, in order. Never raises for a bad input."""
        ...


@dataclass
class RuntimeContext:
    """What runners may use besides their own spec."""

    seed: int | None = None  # None: fresh randomness per call, like FIND
    backbone: Any | None = (
        None  # interp_harness.function_store.entities_relations backbone client, when configured
    )
    extra: dict[str, Any] = field(default_factory=dict)


RunnerFactory = Callable[[Target, RuntimeContext], Runner]
Preparer = Callable[[Target], Target]
_RUNNERS: dict[str, RunnerFactory] = {}
_PREPARERS: dict[str, Preparer] = {}


def register_runner(name: str) -> Callable[[RunnerFactory], RunnerFactory]:
    def deco(factory: RunnerFactory) -> RunnerFactory:
        _RUNNERS[name] = factory
        return factory

    return deco


def register_preparer(name: str) -> Callable[[Preparer], Preparer]:
    """A preparer makes a target self-contained before it enters a sandbox (e.g. trains and embeds
    MLP weights), so the sandboxed service never trains, downloads or reads host files."""

    def deco(fn: Preparer) -> Preparer:
        _PREPARERS[name] = fn
        return fn

    return deco


def _runner_modules() -> dict[str, str]:
    """Runner name prefix -> the module that registers it, from the records' `runners`."""
    return {kind: module for b in benchmarks() for kind, module in b.runners.items()}


def _ensure_registered(name: str) -> None:
    if name not in _RUNNERS:
        module = _runner_modules().get(name.split("-")[0])
        if module:
            importlib.import_module(module)


def prepare_target(target: Target) -> Target:
    """The target with everything its runner needs inline (a no-op for most runners)."""
    if target.unavailable_reason:
        return target
    _ensure_registered(target.hidden.runner)
    prep = _PREPARERS.get(target.hidden.runner)
    return prep(target) if prep else target


def build_runner(target: Target, ctx: RuntimeContext | None = None) -> Runner:
    if target.unavailable_reason:
        raise TargetUnavailable(f"{target.id} is unavailable: {target.unavailable_reason}")
    name = target.hidden.runner
    _ensure_registered(name)
    if name not in _RUNNERS:
        # no target id in the text: every target of the family fails with this one cause
        raise RunnerMissing(
            f"no installed benchmark registers the runner {name!r} where the target service "
            "runs (with HARNESS_SANDBOX=docker, the plugin's wheel goes into the target image "
            "through HARNESS_TARGET_IMAGE_WHEELS)"
        )
    return _RUNNERS[name](target, ctx or RuntimeContext())


def call_target(
    target: Target, inputs: Sequence[str], ctx: RuntimeContext | None = None
) -> list[CallOutput]:
    return build_runner(target, ctx).call(list(inputs))
