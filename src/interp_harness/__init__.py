"""interp_harness: the one import package of this project. Each part is a subpackage whose folder
has its import name (harness, function_store, agents, evaluator, model_services, sdk: the public
API), and `_registry` declares our benchmarks as Inspect AI tasks (`interp_harness/<task>`,
docs/inspect.md). This module imports nothing: sandboxes bind it beside the parts they may use."""
