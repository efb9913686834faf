"""FIND entities' outputs are plain numbers (FIND's P("1")/(P("0")+P("1")) with 4 decimals), so
their command declares `value="number"` and a cell gets floats; a relation's output is the
backbone's reply, which stays text. Read from the real entity runner's outputs through the
backbone server (SmolLM2)."""

from __future__ import annotations

import re

from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.runtime import RuntimeContext, call_target
from interp_harness.harness.lab.api import call_commands, call_value

WORDS = ["NFL", "banana", "olympics"]


def test_entity_outputs_read_as_numbers_in_the_lab(backbone_url: str) -> None:
    target = Catalog().get("find-v1/entities/f00000")
    outputs = call_target(target, WORDS, RuntimeContext(backbone=backbone_url))
    spec = call_commands(benchmark("entities").commands)[0]
    got, errors = call_value(spec, outputs)
    assert errors == [] and len(got) == len(WORDS)
    for o, v in zip(outputs, got, strict=True):
        assert re.fullmatch(r"[01]\.\d{4}", o.output or ""), o  # a plain number per input
        assert isinstance(v, float) and v == float(o.output or "")
    assert call_commands(benchmark("relations").commands)[0].value == "text"
