"""Scores of a finished episode on an SAE latent: the agent's [DESCRIPTION] on the latent's
held-out examples (from the SAE's catalog, interp_harness.function_store.sae.catalog; no service needed):
- observational P/R/F1 (interp_harness.evaluator.sae.observational, lexical membership);
- delphi's detection and fuzzing (interp_harness.evaluator.sae.detection, interp_harness.evaluator.sae.fuzzing): accuracy,
  balanced accuracy, AUC, decided by the judge when one is configured, else lexically;
- Bills et al.'s simulation score (interp_harness.evaluator.simulation): correlation of the simulator's
  predictions with the latent's activations on 5 top + 5 random examples and on all of them,
  simulated by HARNESS_SIMULATOR_URL's model when one is set, else lexically;
and beside each metric `<metric>_ceiling`: the same scorer, same decider and same sampled texts,
on the latent's reference explanation. The ceilings of the judge are cached per target and judge.
A description a metric cannot read (none, or longer than its bound) is the agent's score: the
metric's worst value with the reason (interp_harness.evaluator.answer_bounds), never sent to the
judge or the simulator, the ceilings computed as usual. A judge failure is an error state of
category "judge"; a missing catalog an infrastructure error: never a 0.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from interp_harness.evaluator.answer_bounds import description_refusal, refused
from interp_harness.evaluator.judge import JudgeError, JudgeNotConfigured
from interp_harness.evaluator.sae import classify, detection, fuzzing, observational
from interp_harness.evaluator.scorer import score_parts
from interp_harness.evaluator.simulation import scoring as simulation
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations import observational_scores as scores
from interp_harness.evaluator.token_activations.observational_scores import OBSERVATIONAL
from interp_harness.evaluator.token_activations.simulation import score_simulation
from interp_harness.evaluator.token_activations.testset import TokenActs
from interp_harness.sdk import (
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)

TASKS = (detection.TASK, fuzzing.TASK)
CLASSIFIED = tuple(f"{t.name}_{m}" for t in TASKS for m in classify.METRICS)
METRICS = OBSERVATIONAL + CLASSIFIED
SCORED = METRICS + simulation.METRICS  # with Bills et al.'s simulation scores
CEILING = "_ceiling"


@dataclass(frozen=True)
class Latent:
    """What scoring reads about a latent: its reference explanation and held-out examples."""

    unit: str  # the target id
    reference: str
    activating: Sequence[TokenActs]
    non_activating: Sequence[TokenActs]


def _error(metrics: Sequence[str], category: str, msg: str, **details: Any) -> list[ScoreResult]:
    return [
        ScoreResult(metric=m, status="error", error_category=category, error=msg, details=details)
        for m in metrics
    ]


def _counts(latent: Latent, explanation: str) -> O.Counts:
    examples = [*latent.activating, *latent.non_activating]
    return observational.score(examples, explanation, latent.unit)[1]


def _details(c: O.Counts) -> dict[str, Any]:
    return {"decider": "lexical", "counts": c.model_dump(), "firing_share": O.firing_share(c)}


def _observational(latent: Latent, explanation: str, suffix: str) -> list[ScoreResult]:
    """P/R/F1 and MCC of `explanation` on the latent's examples, named with `suffix`."""
    c = _counts(latent, explanation)
    return [r.model_copy(update={"metric": r.metric + suffix}) for r in scores.mine(c, _details(c))]


def _chance(latent: Latent) -> list[ScoreResult]:
    """The vacuous explanation's P/R/F1 and the firing share of the latent's examples (the
    same whatever the explanation: an explanation that claims nothing is counted)."""
    c = _counts(latent, "")
    return scores.chance(c, _details(c))


_CEILINGS: dict[tuple[str, ...], list[ScoreResult]] = {}


async def _classified(
    task: classify.Task,
    samples: list[classify.Sample],
    description: str,
    latent: Latent,
    decider: classify.Decider,
    details: dict[str, Any],
    cache_key: tuple[str, ...] | None,
) -> list[ScoreResult]:
    names = [f"{task.name}_{m}" for m in classify.METRICS]
    key = (*cache_key, task.name) if cache_key else None
    cached = _CEILINGS.get(key) if key else None
    # a description the decider cannot be given (none, too long) is never sent: the agent's
    # scores are the worst value and only the reference is decided
    refusal = description_refusal(description, task.name)
    mine = refused(names, refusal, **details) if refusal else []
    jobs = [] if refusal else [classify.Job(description, samples)]
    if cached is None:
        jobs.append(classify.Job(latent.reference, samples))
    try:
        results = await classify.run(task, decider, jobs) if jobs else []
    except JudgeError as e:
        failed = names + [n + CEILING for n in names]
        return mine + _error(failed[len(mine) :], "judge", str(e), **details)
    out = mine
    suffixes = (CEILING,) if refusal else ("", CEILING)  # the jobs' order
    for res, suffix in zip(results, suffixes, strict=False):
        d = {**details, "counts": res["counts"], "decisions": res["decisions"]}
        out += [
            ScoreResult(metric=f"{n}{suffix}", value=res[m], details=d)
            for n, m in zip(names, classify.METRICS, strict=True)
        ]
    if cached is not None:
        out += [r.model_copy(deep=True) for r in cached]
    elif key:
        _CEILINGS[key] = [r.model_copy(deep=True) for r in out[len(names) :]]
    return out


async def score_latent(
    description: str,
    latent: Latent,
    decider: classify.Decider | None,
    *,
    seed: int,
    decider_error: str | None = None,
    cache_key: tuple[str, ...] | None = None,
    details: dict[str, Any] | None = None,
) -> list[ScoreResult]:
    """Every metric and its ceiling for one description. `decider=None` with `decider_error`:
    detection and fuzzing are judge errors (a judge configured but unusable). A description a
    metric cannot read (none, or past its bound) is the agent's score: the worst value."""
    refusal = description_refusal(description, "observational")
    if refusal:
        mine = refused(OBSERVATIONAL, refusal, decider="lexical")
    else:
        mine = _observational(latent, description, "")
    out = mine + _observational(latent, latent.reference, CEILING) + _chance(latent)
    if decider is None:
        names = [*CLASSIFIED, *(n + CEILING for n in CLASSIFIED)]
        return out + _error(names, "judge", decider_error or "no decider")
    info = {"decider": decider.name, **(details or {})}
    sets = {
        "detection": detection.samples(latent.activating, latent.non_activating, seed),
        "fuzzing": fuzzing.samples(latent.activating, seed),
    }
    for task in TASKS:
        out += await _classified(
            task, sets[task.name], description, latent, decider, info, cache_key
        )
    return out


def load_latent(target: Target) -> Latent:
    """The latent's catalog entry (the SAE's harness_catalog.json)."""
    from interp_harness.function_store.sae import catalog  # the function_store side of the family

    spec = target.hidden.spec
    index = int(spec["latent"])
    rec = next((r for r in catalog.load(spec["sae"]).latents if r.latent == index), None)
    if rec is None:
        raise LookupError(f"latent {index} is not in the catalog of SAE {spec['sae']!r}")

    def acts(examples: Sequence[Any]) -> list[TokenActs]:
        return [TokenActs(e.text, list(e.tokens), list(e.acts)) for e in examples]

    return Latent(target.id, rec.reference, acts(rec.activating), acts(rec.non_activating))


def excerpts(latent: Latent) -> list[simulation.Excerpt]:
    """The latent's held-out examples for the simulator. Position 0 (SmolLM2's attention sink,
    left out of the SAE's training and statistics) is shown but not scored."""
    return [
        simulation.Excerpt(ex.tokens, [None, *ex.values[1:]])
        for ex in (*latent.activating, *latent.non_activating)
    ]


async def score_sae_episode(
    target: Target, description: str, ctx: ScoringContext
) -> list[ScoreResult]:
    try:
        latent = await asyncio.to_thread(load_latent, target)
    except Exception as e:  # the catalog (not built, unreadable): not the agent's fault
        return _error((*SCORED, *scores.CHANCE), "infrastructure", f"{type(e).__name__}: {e}")
    decided = await _decided(target, description, latent, ctx)
    return decided + await score_simulation(
        target.id, description, latent.reference, excerpts(latent), ctx
    )


async def _decided(
    target: Target, description: str, latent: Latent, ctx: ScoringContext
) -> list[ScoreResult]:
    """Observational, detection and fuzzing scores (the judge's or the lexical decider's)."""
    seed = zlib.crc32(target.id.encode())
    try:
        judge = ctx.judge()
    except JudgeNotConfigured:
        return await score_latent(description, latent, classify.LexicalDecider(), seed=seed)
    except JudgeError as e:  # configured but unusable: the judge's metrics are errors
        return await score_latent(description, latent, None, seed=seed, decider_error=str(e))
    try:
        mode = await judge.mode()
        details = {"judge_model": judge.model, "judge_mode": mode}
        decider = classify.JudgeDecider(judge, ctx.judge_settings.concurrency)
        return await score_latent(
            description,
            latent,
            decider,
            seed=seed,
            cache_key=(target.id, judge.model, mode),
            details=details,
        )
    finally:
        await judge.aclose()


class SAEScorer(Scorer):
    """SAE latents: observational P/R/F1, delphi's detection and fuzzing, Bills et al.'s
    simulation score, each with its ceiling."""

    metrics = (*SCORED, *(m + CEILING for m in SCORED), *scores.CHANCE)

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)
        return await score_parts(
            [lambda: score_sae_episode(target, parsed.description or "", ctx)], stats
        )
