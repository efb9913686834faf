"""`neuron-fixed-explanation`: the floor of the neuron family. It calls the target not once and
gives every neuron the same explanation, a concept with five exemplar words in the form the
scripted baseline writes (`fires on "x", "y", ...`), chosen for no neuron.

Why this floor: Huang et al. 2023 compare GPT-4's explanations with random pairings of neurons
and explanations (the "random" row of their observational-mode results: F1 0.00 for one neuron
without a probe). An agent cannot read another neuron's explanation (it is that target's ground
truth), so one fixed explanation stands in for the randomly paired one: what an explanation earns
when nothing about the neuron went into it. A concept, not the most frequent words of English:
claiming "the" or "and" would turn the floor into a bet on token frequency, which a dense
activation (τ = 0, most tokens above it) can reward.
"""

from __future__ import annotations

from typing import ClassVar

from interp_harness.agents.probing import FixedProbesAgent
from interp_harness.agents.protocol import Observation

# the floor's claim: quoted, so the offline membership decider and the lexical simulator read
# exactly these five strings (evaluator/token_activations/membership.py, evaluator/simulation/simulator.py)
WORDS: tuple[str, ...] = ("red", "blue", "green", "yellow", "black")
EXPLANATION = "colour words: " + ", ".join(f'"{w}"' for w in WORDS)


class FixedExplanationFloor(FixedProbesAgent):
    name = "neuron-fixed-explanation"
    families = frozenset({"neurons"})
    description = (
        "floor for neuron targets: one fixed explanation (colour words) for every neuron, "
        "no call to the target"
    )
    probes: ClassVar[tuple[str, ...]] = ()  # no experiment: the answer comes at the first step

    def describe(self, obs: list[Observation]) -> str:
        return f"[DESCRIPTION]: The neuron fires on {EXPLANATION}."
