"""The Inspect AI tasks of the benchmark registry (entry point group `inspect_ai`):
`inspect eval interp_harness/find --model ...`. Each task is `benchmark_task` over the datasets
named here; it covers the registry's families those datasets serve, and `family` narrows to one.
The parameters are `benchmark_task`'s, declared once there (`task_function` gives each task that
signature, which Inspect reads for `-T` and the log's task_args). Parameters: docs/inspect.md."""

from __future__ import annotations

from inspect_ai import task

import harness.inspect_tasks.hooks  # noqa: F401 - registers the cleanup at the end of a run
from harness.inspect_tasks.task import task_function

find = task(
    task_function(
        "find",
        ("find-v1", "find-gen", "find-import"),
        "find-gen",
        "FIND's functions (numeric, strings, entities, relations) as black boxes to interpret.",
        __name__,
    )
)
neurons = task(
    task_function(
        "neurons",
        ("neuron",),
        "neuron",
        "GPT-2 XL MLP neurons to explain (precision / recall / F1 and IIA).",
        __name__,
    )
)
ravel = task(
    task_function(
        "ravel",
        ("ravel",),
        "ravel",
        "RAVEL: isolate an entity's attribute in a model's hidden states (Cause / Isolate).",
        __name__,
    )
)
