"""What an executor is: it runs one episode to its end, wherever (this event loop, a Ray worker).

The scheduler decides *which* episodes run and when (limits, fairness); an executor only runs one
episode. Either way every step is in the store before the next begins, and the store is the only
state an executor shares with the scheduler. Neither imports the other's module: the scheduler
sees this interface, and the composition root (harness/services.py) picks the executor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from interp_harness.function_store.models import CallOutput, Target
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode.context import ScoreHook
from interp_harness.harness.settings import Settings


class EpisodeJob(BaseModel):
    """One episode to run (or resume) to its end; what travels to a remote worker."""

    run_id: str
    episode_id: str
    spec: RunSpec
    target: Target
    settings: Settings
    # the scheduler holding the run's lease: a worker stops writing once it no longer does
    owner: str | None = None
    # the run plan's agent class (`module:Qualname`; interp_harness.harness.runs.plan); None: resolve spec.agent
    agent_class: str | None = None


class RunControl(Protocol):
    """The scheduler's view of an episode's run, asked before each step (in-process executors;
    a remote worker reads the same facts from the store)."""

    def cancelled(self) -> bool: ...

    def owns(self) -> bool:
        """This process still holds the run's lease: it may write the episode's next step."""
        ...


class Executor(Protocol):
    def connect(self) -> None:
        """Reach the workers (blocking); raises ExecutorConfigError when they cannot be."""
        ...

    async def run(
        self, job: EpisodeJob, score_hook: ScoreHook | None, control: RunControl | None = None
    ) -> str:
        """Run the episode to its end; returns its final status."""
        ...

    async def prewarm(self, target_ids: list[str]) -> None: ...

    async def aclose(self) -> None: ...


class NoLocalTargets:
    """The scheduler's target client when an executor runs its episodes: their target calls are
    made on the workers' nodes, so this process starts no target services."""

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        raise RuntimeError("episodes run on the executor's workers, not in this process")

    async def aclose(self) -> None:
        """Nothing to stop."""


class ExecutorConfigError(ValueError):
    """The configured executor cannot work with the rest of the configuration."""
