"""Observational precision / recall / F1 of an explanation on a latent's held-out examples, as the
neuron benchmark computes them (interp_harness.evaluator.token_activations.observational): an example is "in the
explanation" when the membership decider finds one of the explanation's strings in it, and the
latent "fires" on it iff its max activation over the example's tokens is > 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.testset import TokenActs


def mentions(member: LexicalMembership, tokens: Sequence[str]) -> bool:
    """Does a text (given as its tokens) contain one of the explanation's strings? A token equal
    to a member (so subword members such as "ing" count, as the reference explanation quotes
    tokens), or a member found in the joined text between word boundaries (members of several
    tokens, e.g. "tight end")."""
    if any(member(t) for t in tokens):
        return True
    text = "".join(tokens).lower()
    return any(re.search(rf"(?<![a-z0-9]){re.escape(m)}(?![a-z0-9])", text) for m in member.members)


def fires(ex: TokenActs) -> bool:
    return max(ex.values, default=0.0) > 0


def observations(examples: Sequence[TokenActs], explanation: str, unit: str) -> list[O.Observation]:
    member = LexicalMembership(explanation)
    return [O.Observation(unit, mentions(member, ex.tokens), fires(ex)) for ex in examples]


def score(
    examples: Sequence[TokenActs], explanation: str, unit: str = ""
) -> tuple[O.PRF, O.Counts]:
    """P/R/F1 (None where a denominator is empty) and the counts behind them."""
    c = O.counts(observations(examples, explanation, unit))
    return O.prf(c), c
