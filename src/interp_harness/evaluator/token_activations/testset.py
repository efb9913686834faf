"""A test set Q for one (explanation, neuron) built from a corpus and live activations, the
paper's two halves with the LM replaced by a membership decider:
- Type I probes (explanation-driven): corpus tokens the explanation claims, q ∈ ⟦E⟧;
- Type II probes (activation-driven): the tokens the neuron activates on most (one per sentence,
  a(q) > 0), whose membership the decider judges.
Spans are single model tokens (stripped), so a(q) is that token's activation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from interp_harness.evaluator.token_activations.membership import Membership
from interp_harness.evaluator.token_activations.observational import Observation
from interp_harness.model_services.intervention.client import InterventionClient


@dataclass(frozen=True)
class TokenActs:
    text: str
    tokens: list[str]
    values: list[float]


def read_activations(
    client: InterventionClient, texts: Sequence[str], layer: int, index: int, batch: int = 64
) -> list[TokenActs]:
    out: list[TokenActs] = []
    for i in range(0, len(texts), batch):
        chunk = list(texts[i : i + batch])
        res = client.activations(
            {
                "texts": chunk,
                "component": "mlp_activation",
                "layers": [layer],
                "neurons": [index],
                "positions": "all",
            }
        ).results
        out += [
            TokenActs(t, r.tokens, [row[0] for row in r.layers[0].values])
            for t, r in zip(chunk, res, strict=True)
        ]
    return out


def corpus_sentences(n: int, seed: int) -> list[str]:
    """The default scoring corpus: a seeded sample of the released test sentences (text that is
    not the agent's probe set)."""
    from interp_harness.function_store.token_activations import neuron_release as data

    texts = sorted({it.text for r in data.load() for it in r.items})
    return random.Random(seed).sample(texts, min(n, len(texts)))


CARRIERS = ("They talked about {} for a while.", "The word {} came up again today.")


def carriers(members: Sequence[str], limit: int = 20) -> list[str]:
    """Type I probes without an LM: each claimed string embedded in fixed carrier sentences (the
    paper has an LM write the sentences; `judge_probes` does that when a judge is configured)."""
    return [c.format(m) for m in sorted(members)[:limit] for c in CARRIERS]


def build(
    acts: Sequence[TokenActs], member: Membership, unit: str, *, n_activation: int = 20
) -> list[Observation]:
    obs: list[Observation] = []
    top: list[tuple[float, str]] = []
    for ta in acts:
        best = None
        for tok, v in zip(ta.tokens, ta.values, strict=True):
            if member(tok):  # Type I
                obs.append(Observation(unit, True, v > 0))
            if best is None or v > best[0]:
                best = (v, tok)
        if best is not None and best[0] > 0:
            top.append(best)
    top.sort(key=lambda p: -p[0])
    for _, tok in top[:n_activation]:  # Type II
        if not member(tok):  # a claimed one is already in the Type I half
            obs.append(Observation(unit, False, True))
    return obs
