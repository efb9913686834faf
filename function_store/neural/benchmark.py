"""FIND's entity and relation targets (a language model's concept), two benchmark units that
share the backbone (FIND §3.2, Table 2)."""

from function_store.benchmark import Benchmark, ReportRow

_SOURCES = {
    "find-v1": "function_store.find_v1:load",
    "find-gen": "function_store.find_gen:load",
    "find-import": "function_store.find_import:load",
}

ENTITIES = Benchmark(
    family="entities",
    title="FIND entities (the backbone's concept over words; the judge's unit tests)",
    sources=_SOURCES,
    runners={"entity": "function_store.neural.runners", "script": "function_store.find_import"},
    services=("backbone",),
    prompt="function_store.neural.task_prompts:ENTITIES_PROMPTS",
    scorer="evaluator.unit_tests:JudgeScorer",
    report_rows=(
        ReportRow("entities", "unit_test", table2=True),
        ReportRow("entities (strict)", "unit_test_strict"),
    ),
    headline_metric="unit_test",
    panels=("evaluator.unit_tests_panel:unit_test_panel",),
    exemplars=True,
    docs="docs/find.md",
    order=30,
)

RELATIONS = Benchmark(
    family="relations",
    title="FIND relations (the backbone's relation over words; the judge's unit tests)",
    sources=_SOURCES,
    runners={"relation": "function_store.neural.runners", "script": "function_store.find_import"},
    services=("backbone",),
    prompt="function_store.neural.task_prompts:RELATIONS_PROMPTS",
    scorer="evaluator.unit_tests:JudgeScorer",
    report_rows=(
        ReportRow("relations", "unit_test", table2=True),
        ReportRow("relations (strict)", "unit_test_strict"),
    ),
    headline_metric="unit_test",
    panels=("evaluator.unit_tests_panel:unit_test_panel",),
    exemplars=True,
    docs="docs/find.md",
    order=40,
)
