"""FIND's entity and relation targets (a language model's concept), two benchmark units that
share the backbone (FIND §3.2, Table 2)."""

from typing import Any

from interp_harness.function_store.benchmark import find_sources
from interp_harness.function_store.call_clock import CallBudget
from interp_harness.sdk import Benchmark, ReportRow, find_commands


def _word_benchmark(
    family: str, runner: str, what: str, order: int, value: str = "text", **extra: Any
) -> Benchmark:
    """One of FIND's two units over words: they differ only in their names (the sources, runner,
    prompts and scorer are named after the family), in how an output reads in the lab (`value`)
    and in `extra`."""
    return Benchmark(
        family=family,
        title=f"FIND {family} (the backbone's {what} over words; the judge's unit tests)",
        sources=find_sources(
            "interp_harness.function_store.entities_relations.targets", f"{family}_"
        ),
        reference_data=("interp_harness.function_store.find_data",),
        runners={
            runner: "interp_harness.function_store.entities_relations.runner",
            "script": "interp_harness.function_store.find_import",
        },
        services=("backbone",),
        # one backbone prompt per word (a relation's reply is generated): time for each
        call_budget=CallBudget(per_input_s=2.0, per_kchar_s=5.0),
        commands=find_commands(value=value),
        prompt=f"interp_harness.function_store.entities_relations.prompt:{family.upper()}_PROMPTS",
        scorer=f"interp_harness.evaluator.entities_relations.scorer:{family.upper()}",
        report_rows=(
            ReportRow(family, "unit_test", table2=True),
            ReportRow(f"{family} (strict)", "unit_test_strict"),
        ),
        headline_metric="unit_test",
        panels=("interp_harness.evaluator.unit_tests_panel:judge_test_panel",),
        exemplars=True,
        docs="docs/find.md",
        order=order,
        **extra,
    )


# FIND's entity CLI prints scores with `:.4f`: each output is a plain number (a float in the
# lab); a relation's output is the backbone's reply, text
ENTITIES = _word_benchmark("entities", "entity", "concept", 30, "number", reply_decimals=4)
RELATIONS = _word_benchmark("relations", "relation", "relation", 40)
