"""What one episode runs with, beside its stored row and its agent: one value, built by whoever
runs the episode (the local executor, a Ray worker through it, the Inspect text task) and passed
to `execute_episode` and `EpisodeRunner`.

It holds live objects (the store's connection, the target client, callables), so it never
crosses a process boundary: a Ray worker receives the picklable `EpisodeJob`
(harness/executors/base.py) and builds its own context from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.turns import LabFactory
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import TargetClient

# (target, final answer, usage, what scoring may use) -> scores
ScoreHook = Callable[[Target, str, EpisodeStats, ScoringContext], Awaitable[list[ScoreResult]]]


def _never() -> bool:
    return False


def _always() -> bool:
    return True


@dataclass(frozen=True)
class EpisodeContext:
    """The run's side of one episode: where it is stored, what it interprets and under which
    spec, how it reaches the target, how it is scored and stopped, and its lab."""

    store: Store
    target: Target
    spec: RunSpec
    client: TargetClient  # the episode's sandboxed target client
    score_hook: ScoreHook | None = None  # None: not scored here (e.g. Inspect scores it)
    should_stop: Callable[[], bool] = _never  # the run was cancelled (checked before each step)
    # this process still holds the run's lease (checked before every write of a step)
    owns: Callable[[], bool] = _always
    step_timeout_s: float | None = None  # the operator's bound on one agent step
    lab_limits: LabLimits = field(default_factory=LabLimits)  # what the prompt says of the lab
    # starts the lab of protocol modes `code` and `code-tools`; None: this runner offers none
    lab_factory: LabFactory | None = None
