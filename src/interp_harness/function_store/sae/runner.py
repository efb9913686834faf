"""Runner of SAE latent targets: texts in, each text's tokens with the latent's activations out.

The token-activation runner (function_store/token_activations/runner.py) with the request naming
the SAE:
one /v1/activations request per call with `sae`, the SAE's layer and component, the latent as the
one unit, every position. Replies in the neuron format (`The(0.00) cat(2.31) [max 2.31]`); errors
are fixed strings, nothing of the service's messages (which may name the SAE or latent) reaches
the agent.
"""

from __future__ import annotations

from interp_harness.function_store.token_activations.runner import ActivationRunner
from interp_harness.sdk import RuntimeContext, Target, register_runner

UNAVAILABLE = "the feature could not be read (intervention service unavailable)"


class SAERunner(ActivationRunner):
    kind = "sae"
    unavailable = UNAVAILABLE
    unit_key = "latent"

    def __init__(self, target: Target, ctx: RuntimeContext | None) -> None:
        super().__init__(target, ctx)
        self.sae: str = target.hidden.spec["sae"]

    def _request(self, texts: list[str]) -> dict:
        return {**super()._request(texts), "sae": self.sae}


@register_runner("sae")
def _factory(target: Target, ctx: RuntimeContext) -> SAERunner:
    return SAERunner(target, ctx)
