"""Reading one unit's per-token activations through the intervention service: the runner the
families whose targets are token activations share (neurons, SAE latents), each naming its unit.

One `/v1/activations` request per call (all positions of every text, one layer, one unit). The
reply per text is compact (docs/neurons.md):

    The(0.00) cat(2.31) sat(0.10) [max 2.31]

every token as it appears in the text followed by its activation (2 decimals), then the max over
the text. Errors are fixed strings: nothing of the service's messages (which may name the layer
or unit) reaches the agent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from interp_harness.function_store.call_clock import model_request
from interp_harness.function_store.intervention_access import connect
from interp_harness.model_services.intervention.client import InterventionClient, InterventionError
from interp_harness.sdk import CallOutput, RuntimeContext, Target

log = logging.getLogger(__name__)


def format_activations(tokens: Sequence[str], values: Sequence[float]) -> str:
    """`The(0.00) cat(2.31) sat(0.10) [max 2.31]`: tokens as they appear in the text."""
    parts = []
    for tok, v in zip(tokens, values, strict=True):
        shown = tok.replace("\n", "\\n")
        parts.append(f"{shown}({_num(v)})")
    top = max(values) if values else 0.0
    return "".join(parts).strip() + f" [max {_num(top)}]"


def _num(v: float) -> str:
    s = f"{v:.2f}"
    return "0.00" if s == "-0.00" else s


class ActivationRunner:
    """A family's runner sets what differs: its kind, its fixed error, the spec's unit key."""

    kind: str  # in log lines
    unavailable: str  # the fixed error the agent reads
    unit_key: str  # the spec's key of the unit read (a neuron's index, a latent)

    def __init__(self, target: Target, ctx: RuntimeContext | None) -> None:
        spec = target.hidden.spec
        self.model: str = spec["model"]
        self.layer: int = int(spec["layer"])
        self.index: int = int(spec[self.unit_key])
        self.component: str = spec.get("component", "mlp_activation")
        self.ctx = ctx
        self._client: InterventionClient | None = None
        self._lock = threading.Lock()

    def _connect(self) -> InterventionClient:
        with self._lock:
            if self._client is None:
                self._client, _ = connect(self.model, self.ctx)
            return self._client

    def _request(self, texts: list[str]) -> dict:
        """One /v1/activations request: every position of the texts, one layer, one unit."""
        return {
            "texts": texts,
            "component": self.component,
            "layers": [self.layer],
            "neurons": [self.index],
            "positions": "all",
        }

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        texts = list(inputs)
        out: list[CallOutput | None] = [
            CallOutput(input=t, error="empty text") if not t.strip() else None for t in texts
        ]
        todo = [i for i, o in enumerate(out) if o is None]
        if todo:
            try:
                client = self._connect()
                with model_request() as report:  # its queue wait is not the target's time
                    reply = client.activations(self._request([texts[i] for i in todo]))
                    report(reply.queue_s)
                res = reply.results
            except InterventionError as e:
                log.warning("%s target %s:%s: %s", self.kind, self.layer, self.index, e)
                return [
                    o
                    or CallOutput(input=t, error=self.unavailable, error_category="infrastructure")
                    for t, o in zip(texts, out, strict=True)
                ]
            for i, r in zip(todo, res, strict=True):
                values = [row[0] for row in r.layers[0].values]
                out[i] = CallOutput(input=texts[i], output=format_activations(r.tokens, values))
        return [o for o in out if o is not None]
