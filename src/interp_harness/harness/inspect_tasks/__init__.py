"""Our benchmarks as Inspect AI tasks (`inspect eval interp_harness/find`): docs/inspect.md."""
