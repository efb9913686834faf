"""Runner of neuron targets: texts in, each text's tokens with the neuron's activations out, read
through the intervention service as every token-activation family reads them
(interp_harness.function_store.token_activations.runner: one `/v1/activations` request per call, the
reply `The(0.00) cat(2.31) sat(0.10) [max 2.31]`, fixed errors)."""

from __future__ import annotations

from interp_harness.function_store.token_activations.runner import ActivationRunner
from interp_harness.sdk import RuntimeContext, Target, register_runner

UNAVAILABLE = "the neuron could not be read (intervention service unavailable)"


class NeuronRunner(ActivationRunner):
    kind = "neuron"
    unavailable = UNAVAILABLE
    unit_key = "index"  # the neuron's index in its layer


@register_runner("neuron")
def _factory(target: Target, ctx: RuntimeContext) -> NeuronRunner:
    return NeuronRunner(target, ctx)
