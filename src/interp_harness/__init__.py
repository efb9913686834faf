"""interp_harness: the one import package of this project. Its parts are the repository's
folders (pyproject.toml, `[tool.interp_harness.parts]`); `interp_harness.sdk` is the public API,
and `_registry` declares our benchmarks as Inspect AI tasks (`interp_harness/<task>`,
docs/inspect.md). This module imports nothing: sandboxes bind it beside the parts they may use."""
