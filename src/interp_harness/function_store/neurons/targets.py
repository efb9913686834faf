"""Catalog source `neuron`: one target per MLP neuron, id `neuron/<model>/<layer>:<index>`.

- `gpt2-xl`: the 255 neurons of the released data, each with its GPT-4 explanation as hidden
  ground truth (the reference an agent's description is scored next to);
- `smollm2`: a seeded sample of SmolLM2-135M's MLP neurons (no reference explanation), the offline
  stand-in served by `harness intervention serve --model smollm2`.
The neuron's identity lives in the id and the hidden spec only; the agent sees neither (the task
prompt is the same for every neuron target, and the runner's replies carry tokens and values).
"""

from __future__ import annotations

import logging
import random

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.models import Family, model_target
from interp_harness.function_store.token_activations import neuron_release as data
from interp_harness.sdk import Target

log = logging.getLogger(__name__)

# model key -> (layers, MLP width); the neuron space is `mlp_activation` (GPT-2: post-GELU;
# Llama: act_fn(gate_proj(x)))
MODELS: dict[str, tuple[int, int]] = {"gpt2-xl": (48, 6400), "smollm2": (30, 1536)}
SMOLLM2_SAMPLE = 32


def neuron_id(model: str, layer: int, index: int) -> str:
    return f"neuron/{model}/{layer}:{index}"


def _target(model: str, layer: int, index: int, explanation: str = "") -> Target:
    tid = neuron_id(model, layer, index)
    spec = {"model": model, "layer": layer, "index": index, "component": "mlp_activation"}
    return model_target(tid, "neuron", "neurons", model, "neuron", spec, explanation)


def smollm2_sample(seed: int = 0, n: int = SMOLLM2_SAMPLE) -> list[tuple[int, int]]:
    layers, width = MODELS["smollm2"]
    rng = random.Random(f"neuron-smollm2:{seed}")
    picked = sorted({(rng.randrange(layers), rng.randrange(width)) for _ in range(n * 2)})
    return sorted(rng.sample(picked, n))


def load(family: Family, options: CatalogOptions) -> list[Target]:
    if family != "neurons":
        return []
    out = [_target("smollm2", layer, i) for layer, i in smollm2_sample(options.gen_seed)]
    try:
        records = data.load()
    except DataUnavailable as e:  # the sampled SmolLM2 neurons need no data
        log.warning("GPT-2 XL neuron targets not listed: %s", e)
        return out
    return [_target("gpt2-xl", r.layer, r.index, r.explanation) for r in records] + out
