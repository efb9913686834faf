"""The lab's `target` module is written from each benchmark's declared commands (no code of the
benchmark's own), and a call's outputs become the values its declaration names."""

from __future__ import annotations

import ast
import math

import pytest

from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.benchmark import benchmarks
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.lab.api import (
    call_commands,
    call_value,
    list_arg,
    module_source,
    signature,
)


@pytest.mark.parametrize("record", benchmarks(), ids=lambda b: b.family)
def test_every_benchmark_gets_a_module_of_its_commands(record) -> None:  # type: ignore[no-untyped-def]
    src = module_source(record.commands)
    tree = ast.parse(src)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    calls = call_commands(record.commands)
    assert {s.name for s in calls} <= defined
    assert "submit_answer" not in defined  # the answer is the message, not a call
    has_list = any(list_arg(s) is not None for s in calls)
    aliases = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    assert ("f" in aliases) == has_list
    for s in calls:
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == s.name)
        assert ast.get_docstring(fn) == s.tool_description()


def test_signatures_follow_the_schema() -> None:
    spec = ToolSpec(
        name="interchange",
        description="d",
        parameters={
            "type": "object",
            "properties": {"tokens": {"type": "integer"}, "base": {"type": "string"}},
            "required": ["base"],
        },
    )
    assert signature(spec) == "interchange(base, tokens=None)"
    odd = spec.model_copy(update={"parameters": {"type": "object", "properties": {"from": {}}}})
    assert signature(odd) == "interchange(**arguments)"  # a keyword cannot be a parameter


def _outs(*texts: str | None) -> list[CallOutput]:
    return [
        CallOutput(input=str(i), output=t) if t is not None else CallOutput(input=str(i), error="e")
        for i, t in enumerate(texts)
    ]


def test_values_are_read_as_the_declaration_says() -> None:
    by_family = {b.family: b for b in benchmarks()}
    num = call_commands(by_family["numeric"].commands)[0]
    got, errors = call_value(num, _outs("2.5", "None", "(1+2j)", "nan", None, "True"))
    assert got[:3] == [2.5, None, {"__complex__": [1.0, 2.0]}]
    assert math.isnan(got[3]) and got[4] is None and got[5] == 1.0
    assert errors == [{"input": "4", "error": "e"}]
    text = call_commands(by_family["strings"].commands)[0]
    assert call_value(text, _outs("None", "2.5"))[0] == ["None", "2.5"]  # text stays text
    single = ToolSpec(name="task", description="d", parameters={"type": "object"})
    assert call_value(single, _outs("the task"))[0] == "the task"  # one output: its value
