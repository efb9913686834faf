"""FIND's numeric functions as a benchmark unit (Schwettmann et al. 2023, FIND §3.1, Table 2)."""

from interp_harness.function_store.benchmark import find_sources
from interp_harness.sdk import Benchmark, ReportRow, find_commands

BENCHMARK = Benchmark(
    family="numeric",
    title="FIND numeric functions (f: R -> R; NMSE of the agent's code)",
    sources=find_sources("interp_harness.function_store.numeric.targets"),
    reference_data=("interp_harness.function_store.find_data",),
    runners={
        "numeric": "interp_harness.function_store.numeric.runner",
        "mlp": "interp_harness.function_store.numeric.runner",
        "script": "interp_harness.function_store.find_import",
    },
    commands=find_commands(domain=True, code=True, value="number"),  # outputs are numbers
    prompt="interp_harness.function_store.numeric.prompt:PROMPTS",
    scorer="interp_harness.evaluator.numeric.scorer:NumericScorer",
    report_rows=(
        ReportRow("numeric (NMSE < 0.1)", "code_success", "wilson", table2=True),
        ReportRow("numeric, IoU (corrupted)", "domain_iou"),
    ),
    headline_metric="code_success",
    panels=("interp_harness.evaluator.numeric.panel:plot_panel",),
    floors=("interpolation",),
    docs="docs/find.md",
    order=10,
)
