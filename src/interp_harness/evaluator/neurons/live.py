"""Activations of the released test items read live from the intervention service, for any model:
each item's concept span is located in its sentence by characters (the released spans are GPT-2
tokens; other tokenizers cut differently) and max-pooled over every model token that overlaps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from interp_harness.function_store.neurons.targets import MODELS
from interp_harness.function_store.token_activations.neuron_release import EvalItem, NeuronRecord
from interp_harness.model_services.intervention.client import InterventionClient
from interp_harness.model_services.intervention.schemas import ModelInfo

GPT2_XL_LAYERS, GPT2_XL_WIDTH = MODELS["gpt2-xl"]


@dataclass
class ItemMatrix:
    items: list[EvalItem]  # the items whose span was found in the sentence
    X: np.ndarray  # [item, neuron] max over the span's tokens
    y: np.ndarray  # 1 = in ⟦E⟧
    skipped: int  # items whose span text is not in the sentence


def char_span(item: EvalItem) -> tuple[int, int] | None:
    span = item.span.strip()
    start = item.text.find(span) if span else -1
    return None if start < 0 else (start, start + len(span))


def is_gpt2_xl(info: ModelInfo) -> bool:
    """The served model has GPT-2 XL's shape: released neurons are read where they are."""
    return info.n_layers == GPT2_XL_LAYERS and info.mlp_width == GPT2_XL_WIDTH


def mapped_layer(layer: int, n_layers: int, source_layers: int = GPT2_XL_LAYERS) -> int:
    """The layer at the same relative depth in a model with `n_layers` layers."""
    return min(n_layers - 1, round(layer * n_layers / source_layers))


def read_items(
    client: InterventionClient,
    record: NeuronRecord,
    layer: int,
    neurons: list[int] | None = None,
    batch: int = 64,
) -> ItemMatrix:
    kept, spans = [], []
    for it in record.items:
        cs = char_span(it)
        if cs is not None:
            kept.append(it)
            spans.append({"char_span": list(cs)})
    rows: list[list[float]] = []
    for i in range(0, len(kept), batch):
        res = client.activations(
            {
                "texts": [it.text for it in kept[i : i + batch]],
                "component": "mlp_activation",
                "layers": [layer],
                "neurons": neurons,
                "positions": spans[i : i + batch],
                "pooling": "max",
            }
        ).results
        rows += [r.layers[0].values[0] for r in res]
    return ItemMatrix(
        items=kept,
        X=np.array(rows, float).reshape(len(kept), -1),
        y=np.array([it.in_explanation for it in kept], int),
        skipped=len(record.items) - len(kept),
    )
