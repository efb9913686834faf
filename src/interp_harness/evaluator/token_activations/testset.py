"""A test set Q for one (explanation, neuron) built from a corpus and live activations, the
paper's two halves with the LM replaced by a membership decider:
- Type I probes (explanation-driven): corpus tokens the explanation claims, q ∈ ⟦E⟧;
- Type II probes (activation-driven): the tokens the neuron activates on most (one per sentence,
  a(q) > 0), whose membership the decider judges.
Spans are single model tokens (stripped), so a(q) is that token's activation.

The two halves alone hold almost no item that is neither claimed nor firing, and the share of
firing items is whatever the explanation and the neuron make it, so claiming every item can beat
a real explanation on F1 (Huang et al.'s released sets: 7,472 of 9,592 items fire). `build` then
controls that share: it adds corpus tokens the explanation does not claim, non-firing ones (or
firing ones) until FIRING_SHARE of the items fire, so the vacuous
explanation's F1 is 2p / (1 + p) on every neuron (docs/neurons.md, "The test set's firing share").
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


# the share of a live test set's items the neuron fires on: half, so a vacuous explanation's F1 is
# 2/3 on every neuron, as on an SAE latent's 10 activating and 10 quiet texts
FIRING_SHARE = 0.5


def build(
    acts: Sequence[TokenActs],
    member: Membership,
    unit: str,
    *,
    n_activation: int = 20,
    firing_share: float | None = FIRING_SHARE,
    pool_texts: int | None = None,
) -> list[Observation]:
    """Type I items (every claimed token), Type II items (the `n_activation` top activations,
    one per text, unclaimed), then, with `firing_share`, unclaimed tokens of the first
    `pool_texts` texts (all by default: the corpus sample, not the carriers) until that share of
    the items fire, or the pool runs out. Which of the pool's tokens are added does not matter:
    an item counts only by whether it is claimed and fires. Position 0 (the attention sink) is
    never added."""
    obs: list[Observation] = []
    top: list[tuple[float, str, tuple[int, int]]] = []
    for i, ta in enumerate(acts):
        best = None
        for j, (tok, v) in enumerate(zip(ta.tokens, ta.values, strict=True)):
            if member(tok):  # Type I
                obs.append(Observation(unit, True, v > 0))
            if best is None or v > best[0]:
                best = (v, tok, (i, j))
        if best is not None and best[0] > 0:
            top.append(best)
    top.sort(key=lambda p: -p[0])
    taken: set[tuple[int, int]] = set()
    for _, tok, at in top[:n_activation]:  # Type II
        if not member(tok):  # a claimed one is already in the Type I half
            obs.append(Observation(unit, False, True))
            taken.add(at)
    if firing_share is None:
        return obs
    pool = {True: 0, False: 0}  # unclaimed tokens not yet in the set, by whether they fire
    for i, ta in enumerate(acts[:pool_texts]):
        for j, (tok, v) in enumerate(zip(ta.tokens, ta.values, strict=True)):
            if j > 0 and (i, j) not in taken and not member(tok):
                pool[v > 0] += 1
    return obs + balance(obs, pool, firing_share, unit)


def balance(
    obs: Sequence[Observation], pool: dict[bool, int], share: float, unit: str
) -> list[Observation]:
    """The unclaimed items that bring the share of firing items in `obs` to `share` (rounded to
    the nearest item): non-firing ones when too many fire, firing ones when too few, at most as
    many as `pool` holds of each."""
    if not 0 < share < 1:
        raise ValueError(f"a firing share is between 0 and 1, not {share}")
    n, fired = len(obs), sum(o.fires for o in obs)
    if n and fired / n > share:
        fires, need = False, round(fired / share - n)
    else:
        fires, need = True, round((share * n - fired) / (1 - share))
    return [Observation(unit, False, fires)] * min(max(need, 0), pool[fires])
