"""FIND's string functions as a benchmark unit (FIND §3.1, Table 2)."""

from interp_harness.function_store.benchmark import find_sources
from interp_harness.sdk import Benchmark, ReportRow, find_commands

BENCHMARK = Benchmark(
    family="strings",
    title="FIND string functions (exact match of the agent's code; the judge's unit tests)",
    sources=find_sources("interp_harness.function_store.strings.targets"),
    reference_data=("interp_harness.function_store.find_data",),
    runners={
        "string": "interp_harness.function_store.strings.runner",
        "script": "interp_harness.function_store.find_import",
    },
    commands=find_commands(code=True),
    prompt="interp_harness.function_store.strings.prompt:PROMPTS",
    scorer="interp_harness.evaluator.strings.scorer:StringsScorer",
    report_rows=(
        ReportRow("strings, code", "string_exact", table2=True),
        ReportRow("strings, unit test", "unit_test", table2=True),
        ReportRow("strings, code (FIND-compat)", "string_exact_find"),
        ReportRow("strings, unit test (strict)", "unit_test_strict"),
    ),
    headline_metric="string_exact",
    panels=("interp_harness.evaluator.strings.panel:code_test_panel",),
    docs="docs/find.md",
    order=20,
)
