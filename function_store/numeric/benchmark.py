"""FIND's numeric functions as a benchmark unit (Schwettmann et al. 2023, FIND §3.1, Table 2)."""

from function_store.benchmark import Benchmark, ReportRow, find_sources
from function_store.commands import find_commands

BENCHMARK = Benchmark(
    family="numeric",
    title="FIND numeric functions (f: R -> R; NMSE of the agent's code)",
    sources=find_sources("function_store.numeric.sources"),
    reference_data=("function_store.find_data",),
    runners={
        "numeric": "function_store.numeric.runners",
        "mlp": "function_store.numeric.runners",
        "script": "function_store.find_import",
    },
    commands=find_commands(domain=True, code=True, value="number"),  # outputs are numbers
    prompt="function_store.numeric.prompt:PROMPTS",
    scorer="evaluator.numeric.scorer:NumericScorer",
    report_rows=(
        ReportRow("numeric (NMSE < 0.1)", "code_success", "wilson", table2=True),
        ReportRow("numeric, IoU (corrupted)", "domain_iou"),
    ),
    headline_metric="code_success",
    panels=("evaluator.numeric.panel:plot_panel",),
    floors=("interpolation",),
    docs="docs/find.md",
    order=10,
)
