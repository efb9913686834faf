"""Neuron texts for the simulation score (interp_harness.evaluator.simulation): what a neuron's held-out texts
are, per kind of neuron target.

- Released GPT-2 XL neurons: each released item is one text, the whole sentence. The release gives
  the neuron's activations on the concept span's tokens only: those tokens are scored; the rest of
  the sentence (split into words and punctuation, with their leading spaces) is shown to the
  simulator and not scored. An item whose span is not found in its sentence (27 of 9,592) is its
  span alone; where the span's tokens and activations differ in number (36 items) the extra ones
  are not scored.
- Neurons read live (SmolLM2): each corpus sentence with every token's activation; position 0 (the
  attention sink) is shown, not scored. Their reference explanation, which the released neurons
  have from GPT-4, is `fires on "x", ...`: the tokens with the largest activations on another
  seeded sample of the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interp_harness.evaluator.simulation.scoring import Excerpt
from interp_harness.evaluator.token_activations.testset import TokenActs
from interp_harness.function_store.token_activations.neuron_release import EvalItem, NeuronRecord

_PIECE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")


def split_words(text: str) -> list[str]:
    """Words and punctuation runs, each with its leading spaces; they join back to `text`."""
    return _PIECE.findall(text)


def released_excerpt(item: EvalItem) -> Excerpt:
    span = "".join(item.tokens)
    known: list[float | None] = list(item.activations[: len(item.tokens)])
    known += [None] * (len(item.tokens) - len(known))
    at = item.text.find(span) if span else -1
    if at < 0:
        return Excerpt(list(item.tokens), known)
    before, after = split_words(item.text[:at]), split_words(item.text[at + len(span) :])
    return Excerpt(
        [*before, *item.tokens, *after], [*([None] * len(before)), *known, *([None] * len(after))]
    )


def released_excerpts(record: NeuronRecord) -> list[Excerpt]:
    return [released_excerpt(it) for it in record.items]


def live_excerpts(acts: Sequence[TokenActs]) -> list[Excerpt]:
    return [Excerpt(list(a.tokens), [None, *a.values[1:]]) for a in acts]


def top_token_reference(acts: Sequence[TokenActs], n: int = 5) -> str:
    """`fires on "x", "y", ...`: the `n` distinct tokens (stripped, without quote marks) with the
    largest activations (position 0 left out); an empty string when the neuron never fires
    there."""
    best: dict[str, float] = {}
    for a in acts:
        for tok, v in zip(a.tokens[1:], a.values[1:], strict=False):
            w = tok.strip()
            if w and not set(w) & set("\"'“”") and v > 0 and v > best.get(w, 0.0):
                best[w] = v
    words = sorted(best, key=lambda w: (-best[w], w))[:n]
    return ("fires on " + ", ".join(f'"{w}"' for w in words)) if words else ""
