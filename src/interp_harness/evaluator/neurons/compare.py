"""Huang et al. 2023's comparison of two metrics over the released explanations: each neuron's
simulation score (Bills et al., interp_harness.evaluator.simulation) beside its observational F1 (released
items, shipped activations), and their correlation across neurons. The paper reports about -0.1
between F1 and the GPT-4 simulator's score (its §3); here the simulator is the operator's (a
model behind HARNESS_SIMULATOR_URL, e.g. SmolLM2 through `harness backbone serve`) or the
lexical one, so the figures are of that simulator, not GPT-4.

A neuron's texts are its released items (interp_harness.evaluator.neurons.simulation); top-and-random draws
with the neuron's name as seed. `texts="top-random"` simulates only those 10 texts (the all-texts
score is then not computed), for slow simulators. A model simulator's scores are also set against
the lexical simulator's on the same texts (exact and offline), so a reader can tell a simulator
that reads the explanations from one that agrees with nothing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel

from interp_harness.evaluator.neurons import released
from interp_harness.evaluator.neurons.simulation import released_excerpts
from interp_harness.evaluator.simulation.scoring import (
    correlation,
    pearson,
    simulate,
    top_and_random,
)
from interp_harness.evaluator.simulation.simulator import LexicalSimulator, Simulator
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.function_store.token_activations.neuron_release import NeuronRecord

Texts = Literal["all", "top-random"]


class NeuronRow(BaseModel):
    neuron: str
    f1: float | None
    precision: float | None
    recall: float | None
    simulation_top_random: float | None
    simulation_all: float | None
    top_random_tokens: int
    all_texts: int
    all_tokens: int
    # the lexical simulator's scores on the same texts (None when it is the simulator compared)
    lexical_top_random: float | None = None
    lexical_all: float | None = None


class Agreement(BaseModel):
    """How two per-neuron figures go together over the neurons where both are defined."""

    pearson: float | None
    spearman: float | None
    neurons: int


class Comparison(BaseModel):
    simulator: str
    neurons: int  # compared (a seeded sample when fewer than the release's)
    released: int
    seed: int
    texts: Texts
    rows: list[NeuronRow]
    f1_vs_top_random: Agreement
    f1_vs_all: Agreement
    lexical_vs_top_random: Agreement | None  # None when the simulator is the lexical one
    lexical_vs_all: Agreement | None
    mean_top_random: float | None
    mean_all: float | None
    mean_f1: float | None
    unread: int  # slots where the simulator listed no activation level


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2  # ties share their mean rank
        i = j + 1
    return ranks


def agreement(xs: Sequence[float | None], ys: Sequence[float | None]) -> Agreement:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None and y is not None]
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    return Agreement(
        pearson=pearson(a, b) if len(pairs) > 2 else None,
        spearman=pearson(_ranks(a), _ranks(b)) if len(pairs) > 2 else None,
        neurons=len(pairs),
    )


def _mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None and math.isfinite(x)]
    return sum(v) / len(v) if v else None


def sample(records: Sequence[NeuronRecord], n: int | None, seed: int) -> list[NeuronRecord]:
    """`n` records drawn with `seed` (all of them when `n` is None or not smaller)."""
    if n is None or n >= len(records):
        return list(records)
    return sorted(random.Random(seed).sample(list(records), n), key=lambda r: (r.layer, r.index))


async def compare(
    records: Sequence[NeuronRecord],
    simulator: Simulator,
    *,
    texts: Texts = "all",
    seed: int = 0,
    released_count: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Comparison:
    rows, unread = [], 0
    lexical = None if isinstance(simulator, LexicalSimulator) else LexicalSimulator()
    for k, rec in enumerate(records):
        excerpts = released_excerpts(rec)
        if texts == "top-random":
            top, rnd = top_and_random(excerpts, rec.neuron)
            excerpts = [excerpts[i] for i in [*top, *rnd]]
        res = await simulate(rec.explanation, excerpts, simulator, rec.neuron)
        unread += res.unread
        lex = await simulate(rec.explanation, excerpts, lexical, rec.neuron) if lexical else None
        v = O.prf(O.counts(released.observations([rec], "activations")))
        rows.append(
            NeuronRow(
                neuron=rec.neuron,
                f1=v.f1,
                precision=v.precision,
                recall=v.recall,
                simulation_top_random=res.top_random.value,
                simulation_all=res.all.value if texts == "all" else None,
                top_random_tokens=res.top_random.tokens,
                all_texts=res.all.texts if texts == "all" else 0,
                all_tokens=correlation(res.texts).tokens if texts == "all" else 0,
                lexical_top_random=lex.top_random.value if lex else None,
                lexical_all=lex.all.value if lex and texts == "all" else None,
            )
        )
        if progress:
            progress(k + 1)
    f1s = [r.f1 for r in rows]
    return Comparison(
        simulator=simulator.name,
        neurons=len(rows),
        released=released_count or len(rows),
        seed=seed,
        texts=texts,
        rows=rows,
        f1_vs_top_random=agreement(f1s, [r.simulation_top_random for r in rows]),
        f1_vs_all=agreement(f1s, [r.simulation_all for r in rows]),
        lexical_vs_top_random=None
        if lexical is None
        else agreement(
            [r.lexical_top_random for r in rows], [r.simulation_top_random for r in rows]
        ),
        lexical_vs_all=None
        if lexical is None
        else agreement([r.lexical_all for r in rows], [r.simulation_all for r in rows]),
        mean_top_random=_mean([r.simulation_top_random for r in rows]),
        mean_all=_mean([r.simulation_all for r in rows]),
        mean_f1=_mean(f1s),
        unread=unread,
    )
