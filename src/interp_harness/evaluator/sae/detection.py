"""delphi's detection scorer (Paulo et al. 2024, §3 "Scoring"; EleutherAI delphi,
`scorers/classifier/detection.py`): the scorer model reads the explanation and one held-out text
and says whether the latent is active in it. Half the texts activate the latent, drawn across its
activation quantiles (delphi's `split_quantiles`: the activating examples sorted by activation,
cut into 10 equal slices, the same number drawn at random from each); the other half are random
non-activating texts, as many. Seeded, so an agent's explanation and the reference's see the same
texts. The lexical decider predicts "active" iff the text contains one of the explanation's
strings (interp_harness.evaluator.token_activations.membership).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from interp_harness.evaluator.sae.classify import Sample, Task
from interp_harness.evaluator.sae.observational import fires, mentions
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.testset import TokenActs

N_ACTIVATING = 50  # delphi's n_examples_test
N_QUANTILES = 10  # delphi's n_quantiles

SYSTEM = (
    "You check explanations of a feature of a language model. The feature is active on some "
    "tokens of some texts. You are given an explanation of the feature and one text: decide "
    "whether the feature is active anywhere in the text, that is whether the text contains what "
    'the explanation describes. Reply with only "Answer: 1" if it does or "Answer: 0" if it does '
    "not."
)


def quantile_sample(
    examples: Sequence[TokenActs], n: int, rng: random.Random, n_quantiles: int = N_QUANTILES
) -> list[tuple[TokenActs, int]]:
    """Up to n examples spread over the activation quantiles (quantile 0 the strongest), each with
    its quantile. With no more than n examples, all of them."""
    ordered = sorted(examples, key=lambda e: max(e.values, default=0.0), reverse=True)
    if len(ordered) <= n:
        return [(e, i * n_quantiles // len(ordered)) for i, e in enumerate(ordered)]
    size, per = len(ordered) // n_quantiles, max(1, n // n_quantiles)
    out = []
    for q in range(n_quantiles):
        chunk = ordered[q * size : (q + 1) * size]
        out += [(e, q) for e in rng.sample(chunk, min(per, len(chunk)))]
    return out


def samples(
    activating: Sequence[TokenActs],
    non_activating: Sequence[TokenActs],
    seed: int,
    n: int = N_ACTIVATING,
) -> list[Sample]:
    rng = random.Random(seed)
    pos = quantile_sample([e for e in activating if fires(e)], n, rng)
    quiet = [e for e in non_activating if not fires(e)]
    neg = rng.sample(quiet, min(len(pos), len(quiet)))
    out = [Sample(_text(e), True, tuple(e.tokens), quantile=q) for e, q in pos]
    out += [Sample(_text(e), False, tuple(e.tokens)) for e in neg]
    rng.shuffle(out)
    return out


def _text(e: TokenActs) -> str:
    return e.text or "".join(e.tokens)


def render(explanation: str, s: Sample) -> str:
    return f"Explanation: {explanation}\n\nText: {s.text}"


def lexical(member: LexicalMembership, s: Sample) -> bool:
    return mentions(member, s.tokens or (s.text,))


TASK = Task("detection", SYSTEM, render, lexical)
