"""FIND's entity and relation targets (a language model's concept), two benchmark units that
share the backbone (FIND §3.2, Table 2)."""

from function_store.benchmark import Benchmark, ReportRow, find_sources

ENTITIES = Benchmark(
    family="entities",
    title="FIND entities (the backbone's concept over words; the judge's unit tests)",
    sources=find_sources("function_store.entities_relations.sources", "entities_"),
    reference_data=("function_store.find_data",),
    runners={
        "entity": "function_store.entities_relations.runners",
        "script": "function_store.find_import",
    },
    services=("backbone",),
    prompt="function_store.entities_relations.task_prompts:ENTITIES_PROMPTS",
    reply_decimals=4,  # FIND's entity CLI prints scores with `:.4f`
    scorer="evaluator.entities_relations:ENTITIES",
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
    sources=find_sources("function_store.entities_relations.sources", "relations_"),
    reference_data=("function_store.find_data",),
    runners={
        "relation": "function_store.entities_relations.runners",
        "script": "function_store.find_import",
    },
    services=("backbone",),
    prompt="function_store.entities_relations.task_prompts:RELATIONS_PROMPTS",
    scorer="evaluator.entities_relations:RELATIONS",
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
