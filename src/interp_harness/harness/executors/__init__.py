"""Where episodes run: in the scheduler's event loop ("local", the default; `LocalExecutor`) or as
Ray tasks across machines ("ray"; docs/scale-out.md). The interface is in `executors.base`."""

from __future__ import annotations

from interp_harness.harness.executors.base import (
    EpisodeJob,
    Executor,
    ExecutorConfigError,
    NoLocalTargets,
    RunControl,
)
from interp_harness.harness.settings import Settings

__all__ = [
    "EpisodeJob",
    "Executor",
    "ExecutorConfigError",
    "NoLocalTargets",
    "RunControl",
    "make_executor",
]


def make_executor(settings: Settings) -> Executor | None:
    """The remote executor HARNESS_EXECUTOR names; None for "local" (the scheduler runs episodes
    in its own event loop with a `LocalExecutor`)."""
    if settings.executor == "local":
        return None
    from interp_harness.harness.executors.ray_executor import RayExecutor

    return RayExecutor(settings)
