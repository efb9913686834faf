"""Observations from the released data: which items the explanation claims, and whether the
neuron fired, read either from the shipped labels or recomputed from the shipped activations."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

from interp_harness.evaluator.token_activations.observational import Observation
from interp_harness.function_store.token_activations.neuron_release import NeuronRecord

FiringSource = Literal["activations", "labels"]
# The paper's numbers (300 explanations, GPT-2 XL, single neuron, no probe; Huang et al. 2023).
PAPER = {"precision": 0.64, "recall": 0.50, "f1": 0.56}


def observations(
    records: Iterable[NeuronRecord], source: FiringSource = "activations", threshold: float = 0.0
) -> Iterator[Observation]:
    """`activations`: fires ⇔ max over the span's shipped activations > threshold (the paper's
    rule); `labels`: fires ⇔ the label is TP or FN (the annotators' reading)."""
    for r in records:
        for it in r.items:
            if source == "labels":
                fires = it.label in ("true_positive", "false_negative")
            else:
                fires = it.max_activation > threshold
            yield Observation(
                unit=r.neuron, in_explanation=it.in_explanation, fires=fires, group=str(r.layer)
            )
