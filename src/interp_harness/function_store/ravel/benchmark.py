"""RAVEL attribute localisation (Huang et al. 2024) as a benchmark unit."""

from interp_harness.function_store.call_clock import CallBudget
from interp_harness.function_store.ravel.commands import COMMANDS
from interp_harness.sdk import Benchmark

BENCHMARK = Benchmark(
    family="ravel",
    title="RAVEL: localise an entity attribute in a model (Cause / Isolate / Disentangle)",
    sources={"ravel": "interp_harness.function_store.ravel.targets:load"},
    fixed_datasets=("ravel",),
    reference_data=("interp_harness.function_store.ravel.data",),
    runners={"ravel": "interp_harness.function_store.ravel.runner"},
    services=("intervention",),
    # one activations or interchange request per call (an interchange generates): time for
    # each word of the command and its length
    call_budget=CallBudget(per_input_s=2.0, per_kchar_s=5.0),
    commands=COMMANDS,
    prompt="interp_harness.function_store.ravel.prompt:PROMPTS",
    scorer="interp_harness.evaluator.ravel.scorer:RavelScorer",
    cli={"ravel": "interp_harness.evaluator.ravel.cli:ravel_app"},
    docs="docs/ravel.md",
    order=60,
)
