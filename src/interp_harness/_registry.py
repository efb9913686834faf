"""The Inspect AI tasks of the benchmark registry (entry point group `inspect_ai`):
`inspect eval interp_harness/find --model ...`. Each task is `benchmark_task` over some datasets;
it covers the registry's families those datasets serve, and `family` narrows to one. `find` spans
FIND's datasets (shared by its four families); every family with datasets of its own
(`fixed_datasets`: neurons, RAVEL, SAE latents, a plugin's) gets a task named after the family,
so a new benchmark unit is an Inspect task without an edit here. The parameters are
`benchmark_task`'s, declared once there (`task_function` gives each task that signature, which
Inspect reads for `-T` and the log's task_args). Parameters: docs/inspect.md."""

from __future__ import annotations

from inspect_ai import task

import interp_harness.harness.inspect_tasks.hooks  # noqa: F401 - registers the cleanup at the end of a run
from interp_harness.function_store.benchmark import benchmarks
from interp_harness.harness.inspect_tasks.task import task_function

find = task(
    task_function(
        "find",
        ("find-v1", "find-gen", "find-import"),
        "find-gen",
        "FIND's functions (numeric, strings, entities, relations) as black boxes to interpret.",
        __name__,
    )
)

for _record in benchmarks():
    if _record.fixed_datasets and _record.family not in globals():
        globals()[_record.family] = task(
            task_function(
                _record.family,
                _record.fixed_datasets,
                _record.fixed_datasets[0],
                _record.title,
                __name__,
            )
        )
