"""Our benchmarks as Inspect AI tasks, under the name `interp_harness/<task>` (Inspect names a
registered task after the top-level package that defines it). The code is in
`harness/inspect_tasks/`; docs/inspect.md."""
