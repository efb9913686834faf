"""Reproduction (docs/reproductions.md): Huang et al.'s observational P/R/F1 on the released data.

Published figure (Huang, Geiger, D'Oosterlinck, Wu, Potts, "Rigorously Assessing Natural Language
Explanations of Neurons", BlackboxNLP 2023, arXiv 2309.10312; observational mode, GPT-4
explanations, single neuron, no probe): precision 0.64, recall 0.50, F1 0.56, over 300
explanations. The release (`observational_eval_data.json`) holds 255 of them. Recomputed here
with the project's code from HARNESS_DATA_DIR: the paper's rule (a neuron fires on an item iff
the max of its activation over the concept span is > 0), pooled over items (micro).
Tolerance: each figure within 0.02 of the paper's, and inside our 95% bootstrap interval
(1,000 resamples of neurons).
"""

from __future__ import annotations

import pytest

from interp_harness.evaluator.neurons import released
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.function_store.token_activations import neuron_release as data

PAPER = {"precision": 0.64, "recall": 0.50, "f1": 0.56}
TOLERANCE = 0.02


@pytest.mark.parametrize("source", ["activations", "labels"])
def test_released_explanations_reproduce_the_papers_figures(source: str) -> None:
    rep = O.evaluate(released.observations(data.load(), source), n_boot=1000, seed=0)
    micro = rep.overall.micro
    for name, paper in PAPER.items():
        ours = getattr(micro, name)
        assert abs(ours - paper) <= TOLERANCE, f"{name}: ours {ours:.3f}, paper {paper}"
        ci = rep.overall.micro_ci[name]
        assert ci.low <= paper <= ci.high, f"{name}: paper {paper} outside [{ci.low}, {ci.high}]"
