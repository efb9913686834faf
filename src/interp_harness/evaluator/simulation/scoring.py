"""Simulation scores of one explanation on one unit's held-out texts (Bills et al. 2023).

The score is the Pearson correlation of simulated and true activations, pooled over every scored
token of the texts (not a mean of per-text correlations), true activations on the unit's 0-10
scale (`scale.normalise`, the max taken over all the unit's held-out texts). Two samples:
- `simulation_top_random`: the 5 texts with the highest activation and 5 drawn at random (seeded
  by the caller, so an agent's and the reference's explanations see the same texts) from the
  rest: the published score's sample;
- `simulation_all`: every held-out text.
Each text is simulated once; both samples read the same predictions. Details carry the sample
sizes (texts, scored tokens), the simulator's name and, for the panel, the top-and-random texts
with their true and simulated activations.

A constant prediction (the explanation picks out nothing in the texts) covaries with nothing and
scores 0. A unit constant on the texts leaves the correlation undefined: an error state of
category `target`. A simulator failure is an error state of category `judge`. Never a 0. A
description the simulator cannot be given (none, or longer than it reads) is the agent's score:
the worst correlation, -1 (interp_harness.evaluator.answer_bounds).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from interp_harness.evaluator.answer_bounds import Refusal, refused
from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.judge import JudgeError
from interp_harness.evaluator.simulation.scale import normalise, unit_max
from interp_harness.evaluator.simulation.simulator import Simulator

TOP, RANDOM = 5, 5  # the published sample: 5 top-activating and 5 random texts
METRICS = ("simulation_top_random", "simulation_all")
CEILING = "_ceiling"
SAMPLE_NOTE = f"{TOP} top-activating + {RANDOM} random texts (seeded)"


@dataclass(frozen=True)
class Excerpt:
    """One held-out text: its tokens and the unit's activation on each (None where the data
    gives none: shown to the simulator, never scored)."""

    tokens: Sequence[str]
    acts: Sequence[float | None]


class TextSimulation(BaseModel):
    tokens: list[str]
    true: list[int | None]  # 0-10
    simulated: list[float]
    sample: Literal["top", "random", "other"]


class Correlation(BaseModel):
    value: float | None  # None: undefined (the unit is constant on these texts)
    texts: int
    tokens: int  # scored positions


class SimulationResult(BaseModel):
    simulator: str
    top_random: Correlation
    all: Correlation
    unread: int = 0  # slots where the simulator listed no activation level
    texts: list[TextSimulation]


def top_and_random(
    excerpts: Sequence[Excerpt], seed: int | str, n_top: int = TOP, n_random: int = RANDOM
) -> tuple[list[int], list[int]]:
    """Indices of the `n_top` texts with the highest activation (ties: first) and of `n_random`
    others drawn with `seed`."""
    peak = [unit_max(e.acts) if any(a is not None for a in e.acts) else -math.inf for e in excerpts]
    top = sorted(range(len(excerpts)), key=lambda i: (-peak[i], i))[:n_top]
    rest = [i for i in range(len(excerpts)) if i not in set(top)]
    return top, sorted(random.Random(seed).sample(rest, min(n_random, len(rest))))


def pearson(true: Sequence[float], simulated: Sequence[float]) -> float | None:
    """Pooled Pearson correlation; 0 for a constant prediction, None for a constant truth."""
    n = len(true)
    if n < 2:
        return None
    mt, ms = sum(true) / n, sum(simulated) / n
    vt = sum((t - mt) ** 2 for t in true)
    vs = sum((s - ms) ** 2 for s in simulated)
    if vt <= 1e-12:
        return None
    if vs <= 1e-12:
        return 0.0
    cov = sum((t - mt) * (s - ms) for t, s in zip(true, simulated, strict=True))
    return max(-1.0, min(1.0, cov / math.sqrt(vt * vs)))


def correlation(sims: Sequence[TextSimulation]) -> Correlation:
    pairs = [
        (t, s) for x in sims for t, s in zip(x.true, x.simulated, strict=True) if t is not None
    ]
    return Correlation(
        value=pearson([float(t) for t, _ in pairs], [s for _, s in pairs]),
        texts=len(sims),
        tokens=len(pairs),
    )


async def simulate(
    explanation: str, excerpts: Sequence[Excerpt], simulator: Simulator, seed: int | str
) -> SimulationResult:
    """Every text simulated once; both samples' correlations. Raises JudgeError (the
    simulator's failures) to the caller."""
    top = unit_max(a for e in excerpts for a in e.acts)
    sim = await simulator.simulate(explanation, [list(e.tokens) for e in excerpts])
    if len(sim) != len(excerpts) or any(
        len(s) != len(e.tokens) for s, e in zip(sim, excerpts, strict=True)
    ):
        raise JudgeError("the simulator's predictions do not match the texts' tokens")
    tops, randoms = top_and_random(excerpts, seed)
    kind = {i: "top" for i in tops} | {i: "random" for i in randoms}
    texts = [
        TextSimulation(
            tokens=list(e.tokens),
            true=normalise(e.acts, top),
            simulated=[round(v, 3) for v in s],
            sample=kind.get(i, "other"),  # type: ignore[arg-type]
        )
        for i, (e, s) in enumerate(zip(excerpts, sim, strict=True))
    ]
    sample = [texts[i] for i in [*tops, *randoms]]
    return SimulationResult(
        simulator=simulator.name,
        top_random=correlation(sample),
        all=correlation(texts),
        unread=getattr(sim, "unread", 0),
        texts=texts,
    )


def _one(metric: str, c: Correlation, details: dict[str, Any]) -> ScoreResult:
    d = {**details, "texts": c.texts, "tokens": c.tokens}
    if c.value is None:
        return ScoreResult(
            metric=metric,
            status="error",
            error_category="target",
            error="the unit's activation is constant on the scored texts: no correlation",
            details=d,
        )
    return ScoreResult(metric=metric, value=c.value, details=d)


def score_results(
    res: SimulationResult, suffix: str = "", *, panel: bool = True, **details: Any
) -> list[ScoreResult]:
    """`simulation_top_random{suffix}` and `simulation_all{suffix}`; with `panel`, the
    top-and-random texts' activations in the first one's details (`per_text`)."""
    info = {"simulator": res.simulator, "unread": res.unread, **details}
    first = _one(f"{METRICS[0]}{suffix}", res.top_random, info | {"sample": SAMPLE_NOTE})
    if panel:
        first.details["per_text"] = [t.model_dump() for t in res.texts if t.sample != "other"]
    return [first, _one(f"{METRICS[1]}{suffix}", res.all, info | {"sample": "all held-out texts"})]


def error_results(
    category: str, message: str, *, ceiling: bool = True, **details: Any
) -> list[ScoreResult]:
    """Every simulation metric (and its ceiling) as one error state."""
    names = [*METRICS, *((m + CEILING for m in METRICS) if ceiling else ())]
    return [
        ScoreResult(
            metric=m, status="error", error_category=category, error=message, details=details
        )  # type: ignore[arg-type]
        for m in names
    ]


_CEILINGS: dict[tuple[str, ...], list[ScoreResult]] = {}


async def score_explanations(
    description: str,
    reference: str | None,
    excerpts: Sequence[Excerpt],
    simulator: Simulator,
    seed: int | str,
    *,
    cache_key: tuple[str, ...] | None = None,
    refusal: Refusal | None = None,
    **details: Any,
) -> list[ScoreResult]:
    """The agent's description and, beside it, the reference explanation's ceiling (when there
    is one) on the same texts with the same simulator; the ceiling is kept per `cache_key` (the
    target) and simulator, so a target's later episodes reuse it. A simulator failure: judge
    errors. With a `refusal` (the description cannot be read: interp_harness.evaluator.
    answer_bounds) the description is never sent: the agent's scores are the worst value, the
    ceiling is computed as usual, and a simulator failure touches only the ceiling."""
    if refusal is not None:
        return await _refused_with_ceiling(
            refusal, reference, excerpts, simulator, seed, cache_key, details
        )
    try:
        mine = await simulate(description, excerpts, simulator, seed)
        # the simulator's name is known once it has answered (an endpoint's model)
        key = (*cache_key, simulator.name, reference or "") if cache_key else None
        out = score_results(mine, **details)
        if reference and key in _CEILINGS:
            out += [r.model_copy(deep=True) for r in _CEILINGS[key]]
        elif reference:
            ref = await simulate(reference, excerpts, simulator, seed)
            ceiling = score_results(ref, CEILING, panel=False, **details)
            if key is not None:
                _CEILINGS[key] = [r.model_copy(deep=True) for r in ceiling]
            out += ceiling
    except JudgeError as e:
        return error_results("judge", str(e), ceiling=bool(reference), simulator=simulator.name)
    return out


async def _refused_with_ceiling(
    refusal: Refusal,
    reference: str | None,
    excerpts: Sequence[Excerpt],
    simulator: Simulator,
    seed: int | str,
    cache_key: tuple[str, ...] | None,
    details: dict[str, Any],
) -> list[ScoreResult]:
    out = refused(METRICS, refusal, simulator=simulator.name, **details)
    if not reference:
        return out
    # an endpoint's name is known once it has answered: a first look-up under "? at url" misses
    key = (*cache_key, simulator.name, reference) if cache_key else None
    if key in _CEILINGS:
        return out + [r.model_copy(deep=True) for r in _CEILINGS[key]]
    try:
        ref = await simulate(reference, excerpts, simulator, seed)
    except JudgeError as e:  # the simulator failed on the reference: the ceiling's error only
        names = [m + CEILING for m in METRICS]
        return out + [
            ScoreResult(
                metric=m,
                status="error",
                error_category="judge",
                error=str(e),
                details={"simulator": simulator.name},
            )
            for m in names
        ]
    ceiling = score_results(ref, CEILING, panel=False, **details)
    key = (*cache_key, simulator.name, reference) if cache_key else None
    if key is not None:
        _CEILINGS[key] = [r.model_copy(deep=True) for r in ceiling]
    for r in out:
        r.details["simulator"] = simulator.name
    return out + ceiling
