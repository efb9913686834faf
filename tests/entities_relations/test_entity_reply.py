"""Entity replies print scores with 4 decimals, as FIND's entity CLI does (its `function_code.py`
prints `f'({arg}, {score:.4f}) '`): the entity record declares it, the protocol's writer applies it.
"""

from __future__ import annotations

from interp_harness.agents.protocol import format_reply
from interp_harness.function_store.benchmark import benchmark, benchmarks
from interp_harness.function_store.models import CallOutput


def test_only_the_entity_record_fixes_reply_decimals() -> None:
    assert benchmark("entities").reply_decimals == 4
    assert all(b.reply_decimals is None for b in benchmarks() if b.family != "entities")


def test_entity_reply_as_find_prints_it() -> None:
    outs = [CallOutput(input="New York", output="0.98765"), CallOutput(input="Paris", output="1")]
    assert format_reply(outs, decimals=benchmark("entities").reply_decimals) == (
        "Response: Function input - output pairs: (New York, 0.9877) (Paris, 1.0000) \n"
    )
