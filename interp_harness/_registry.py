"""The Inspect AI tasks of the benchmark registry (entry point group `inspect_ai`):
`inspect eval interp_harness/find --model ...`. Each task is a thin wrapper over
`harness.inspect_tasks.task.benchmark_task`; a task covers the registry's families that its
datasets serve, and its `family` parameter narrows to one. Parameters: docs/inspect.md."""

from __future__ import annotations

from inspect_ai import Task, task

import harness.inspect_tasks.hooks  # noqa: F401 - registers the cleanup at the end of a run
from harness.inspect_tasks.task import benchmark_task

FIND_DATASETS = ("find-v1", "find-gen", "find-import")
NEURON_DATASETS = ("neuron",)
RAVEL_DATASETS = ("ravel",)


@task
def find(
    dataset: str = "find-gen",
    family: str | None = None,
    limit: int | None = None,
    seed: int | None = 0,
    gen_seed: int = 0,
    protocol: str = "tools",
    text_mode: str = "find-compat",
    max_rounds: int = 20,
    max_target_calls: int | None = None,
    max_tokens: int | None = None,
    max_wall_s: float | None = None,
) -> Task:
    """FIND's functions (numeric, strings, entities, relations) as black boxes to interpret."""
    return benchmark_task(FIND_DATASETS, **locals())


@task
def neurons(
    dataset: str = "neuron",
    limit: int | None = None,
    seed: int | None = 0,
    protocol: str = "tools",
    text_mode: str = "find-compat",
    max_rounds: int = 20,
    max_target_calls: int | None = None,
    max_tokens: int | None = None,
    max_wall_s: float | None = None,
) -> Task:
    """GPT-2 XL MLP neurons to explain (precision / recall / F1 and IIA)."""
    return benchmark_task(NEURON_DATASETS, **locals())


@task
def ravel(
    dataset: str = "ravel",
    limit: int | None = None,
    seed: int | None = 0,
    protocol: str = "tools",
    text_mode: str = "find-compat",
    max_rounds: int = 20,
    max_target_calls: int | None = None,
    max_tokens: int | None = None,
    max_wall_s: float | None = None,
) -> Task:
    """RAVEL: isolate an entity's attribute in a model's hidden states (Cause / Isolate)."""
    return benchmark_task(RAVEL_DATASETS, **locals())
