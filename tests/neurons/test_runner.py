"""The neuron runner's reply format, read back by the scripted agent, and its fixed errors."""

from __future__ import annotations

from interp_harness.agents.scripted_neuron import parse_activations
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.neurons.runner import UNAVAILABLE
from interp_harness.function_store.runtime import RuntimeContext, build_runner
from interp_harness.function_store.token_activations.runner import format_activations


def test_format_and_parse_round_trip():
    line = format_activations(["The", " cat", " sat", ",", "\n"], [0.0, 2.314, -0.001, 0.5, 1.0])
    assert line == r"The(0.00) cat(2.31) sat(0.00),(0.50)\n(1.00) [max 2.31]"
    assert parse_activations(line) == [
        ("The", 0.0),
        (" cat", 2.31),
        (" sat", 0.0),
        (",", 0.5),
        ("\\n", 1.0),
    ]


def test_runner_reads_smollm2_and_refuses_another_model_without_naming_the_neuron(smol):
    cat = Catalog()
    ctx = RuntimeContext(extra={"backbone_url": smol.settings.url})
    smol_t = cat.list(dataset="neuron", variant="smollm2")[0]
    [ok, empty] = build_runner(smol_t, ctx).call(["Paris is big", " "])
    assert ok.error is None and ok.output.startswith("Paris(") and "[max " in ok.output
    assert empty.error == "empty text"
    xl = cat.get("neuron/gpt2-xl/0:1016")  # served model is SmolLM2, not GPT-2 XL
    [out] = build_runner(xl, ctx).call(["Paris is big"])
    assert (out.error, out.error_category, out.output) == (UNAVAILABLE, "infrastructure", None)
    assert "1016" not in out.error
