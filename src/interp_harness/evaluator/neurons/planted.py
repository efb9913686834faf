"""Huang et al. 2023's planted case (§4.2): a neuron that fires on exactly one token, "2000", and
an explanation that names it and a second token, "2001". Top-and-random texts almost never
contain "2001", so the simulation score stays near perfect there, while the explanation's
precision over texts that contain either is 0.5; on all held-out texts, where "2001" does occur,
the simulation score drops.

The held-out texts are our own sentences: `n_each` with " 2000", `n_each` with " 2001", and
`n_other` that mention neither (other years, or none), shuffled with `seed`. The neuron's
activation is 1 on each " 2000" token, 0 elsewhere. The top-and-random sample is drawn `draws`
times (seeds 0 .. draws-1) from the same simulated texts, so its sampling spread is reported.
"""

from __future__ import annotations

import random
import statistics

from pydantic import BaseModel

from interp_harness.evaluator.neurons.simulation import split_words
from interp_harness.evaluator.simulation.scoring import (
    Correlation,
    Excerpt,
    correlation,
    simulate,
    top_and_random,
)
from interp_harness.evaluator.simulation.simulator import Simulator
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations.membership import LexicalMembership

FIRES_ON = "2000"
SECOND = "2001"
EXPLANATION = f'the years "{FIRES_ON}" and "{SECOND}"'

_WITH_YEAR = (
    "The museum reopened in {} after a long renovation.",
    "She moved to the coast in {} and never left.",
    "Prices rose sharply in {}, according to the report.",
    "The first version of the program shipped in {}.",
    "In {} the village built a new school.",
    "Their band recorded its only album in {}.",
)
_WITHOUT = (
    "The committee will meet again next week.",
    "He poured the coffee and sat by the window.",
    "Rain is expected over the hills tonight.",
    "The library closes early on public holidays.",
    "She fixed the bicycle with a borrowed wrench.",
    "Most of the guests arrived after dinner.",
)


def texts(n_other: int = 1000, n_each: int = 5, seed: int = 0) -> list[Excerpt]:
    """The planted neuron's held-out texts with its activations."""
    rng = random.Random(f"planted:{seed}")
    years = [str(y) for y in range(1950, 2031) if str(y) not in (FIRES_ON, SECOND)]
    sentences = [rng.choice(_WITH_YEAR).format(FIRES_ON) for _ in range(n_each)]
    sentences += [rng.choice(_WITH_YEAR).format(SECOND) for _ in range(n_each)]
    for _ in range(n_other):
        if rng.random() < 0.5:
            sentences.append(rng.choice(_WITH_YEAR).format(rng.choice(years)))
        else:
            sentences.append(rng.choice(_WITHOUT))
    rng.shuffle(sentences)
    out = []
    for s in sentences:
        toks = split_words(s)
        out.append(Excerpt(toks, [1.0 if t.strip() == FIRES_ON else 0.0 for t in toks]))
    return out


class PlantedResult(BaseModel):
    simulator: str
    explanation: str
    top_random: Correlation  # the draw with seed 0
    top_random_mean: float
    top_random_min: float
    draws: int
    all: Correlation
    precision: float | None
    recall: float | None
    texts: int


async def run(
    simulator: Simulator, *, n_other: int = 1000, n_each: int = 5, draws: int = 100, seed: int = 0
) -> PlantedResult:
    excerpts = texts(n_other, n_each, seed)
    res = await simulate(EXPLANATION, excerpts, simulator, 0)
    scores = []
    for k in range(draws):
        top, rnd = top_and_random(excerpts, k)
        value = correlation([res.texts[i] for i in [*top, *rnd]]).value
        scores.append(0.0 if value is None else value)
    member = LexicalMembership(EXPLANATION)
    obs = [
        O.Observation("planted", any(member(t) for t in e.tokens), max(e.acts) > 0)  # type: ignore[type-var]
        for e in excerpts
    ]
    v = O.prf(O.counts(obs))
    return PlantedResult(
        simulator=res.simulator,
        explanation=EXPLANATION,
        top_random=res.top_random,
        top_random_mean=statistics.fmean(scores),
        top_random_min=min(scores),
        draws=draws,
        all=res.all,
        precision=v.precision,
        recall=v.recall,
        texts=len(excerpts),
    )
