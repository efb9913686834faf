"""Scores of a finished episode on a neuron target: observational P/R/F1 of the agent's
[DESCRIPTION], next to the reference explanation's on the same test set when there is one, and
Bills et al.'s simulation score with the reference's beside it (interp_harness.evaluator.simulation, texts as
interp_harness.evaluator.neurons.simulation makes them; the simulator is HARNESS_SIMULATOR_URL's model, else
the lexical one).

- GPT-2 XL neurons of the released data: Q = that neuron's released items, a(q) from the shipped
  activations (no model needed); the reference is the GPT-4 explanation with its shipped labels.
- Other neurons (SmolLM2): Q built live (interp_harness.evaluator.token_activations.testset) from a corpus sample through
  the intervention service (HARNESS_INTERVENTION_URL); no reference exists.
Membership of the agent's explanation is decided lexically offline (interp_harness.evaluator.token_activations.membership).
When the explanation matches one of the 12 intervention tasks, the neuron's IIA on that task is
scored too (interp_harness.evaluator.neurons.task_iia).
A service failure is an error state (infrastructure), a simulator failure one of category judge,
never a 0. A description the scorer cannot read (none, or past its bound) is the agent's score:
each metric's worst value with the reason (interp_harness.evaluator.answer_bounds), the
reference's ceilings beside it as usual.
"""

from __future__ import annotations

import asyncio
import os
import zlib
from dataclasses import dataclass
from typing import Any

from interp_harness.evaluator.answer_bounds import description_refusal, refused
from interp_harness.evaluator.neurons import released
from interp_harness.evaluator.neurons import simulation as texts_for
from interp_harness.evaluator.neurons.task_iia import iia_score
from interp_harness.evaluator.simulation import scoring as simulation
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations import observational_scores as scores
from interp_harness.evaluator.token_activations import testset
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.observational_scores import OBSERVATIONAL
from interp_harness.evaluator.token_activations.simulation import score_simulation
from interp_harness.function_store.intervention_access import connect_url
from interp_harness.sdk import (
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)

CORPUS_SENTENCES = int(os.environ.get("HARNESS_NEURON_EVAL_SENTENCES", "64"))


def _released_record(target: Target):
    from interp_harness.function_store.token_activations import neuron_release as data

    spec = target.hidden.spec
    name = f"{spec['layer']}:{spec['index']}"
    return next((r for r in data.load() if r.neuron == name), None)


@dataclass
class _Scored:
    prf: O.PRF
    counts: O.Counts
    reference_counts: O.Counts | None
    info: dict
    excerpts: list[simulation.Excerpt]  # the held-out texts of the simulation score
    reference: str  # the reference explanation ("" when there is none)


def _reference_sample(unit: str, scored: list[str]) -> list[str]:
    """Corpus sentences for a live neuron's reference explanation, none of them scored."""
    seen = set(scored)
    more = testset.corpus_sentences(len(scored) * 2, seed=zlib.crc32(f"{unit}/reference".encode()))
    return [t for t in more if t not in seen][: len(scored)]


def _score(description: str, target: Target, url: str | None) -> _Scored:
    member = LexicalMembership(description)
    spec = target.hidden.spec
    unit = f"{spec['layer']}:{spec['index']}"
    rec = _released_record(target) if spec["model"] == "gpt2-xl" else None
    if rec is not None:
        obs = [O.Observation(unit, member(it.span), it.max_activation > 0) for it in rec.items]
        ref = O.counts(released.observations([rec], "activations"))
        info: dict[str, Any] = {"test_set": f"released items of {len(rec.items)} sentences"}
        excerpts, reference = texts_for.released_excerpts(rec), rec.explanation
    else:
        corpus = testset.corpus_sentences(CORPUS_SENTENCES, seed=zlib.crc32(unit.encode()))
        texts = corpus + testset.carriers(sorted(member.members))
        extra = _reference_sample(unit, corpus)
        client, _ = connect_url(spec["model"], url)  # the neuron's own model, or an error
        with client:
            acts = testset.read_activations(client, texts + extra, spec["layer"], spec["index"])
        acts, ref_acts = acts[: len(texts)], acts[len(texts) :]
        obs = testset.build(acts, member, unit, pool_texts=len(corpus))
        ref = None  # only the released GPT-2 XL neurons have a reference explanation
        info = {
            "test_set": f"{len(corpus)} released sentences + {len(texts) - len(corpus)} "
            "carrier sentences of the claimed strings, live activations",
            "firing_share_target": testset.FIRING_SHARE,
        }
        excerpts = texts_for.live_excerpts(acts[: len(corpus)])
        reference = texts_for.top_token_reference(ref_acts)
    info["decider"] = "lexical (quoted strings)" if member.quoted else "lexical (content words)"
    c = O.counts(obs)
    return _Scored(O.prf(c), c, ref, info, excerpts, reference)


# the metrics of the report's rows besides the simulation's: an error state for each when the
# test set cannot be built
_REPORTED = ("observational_f1", "observational_mcc", *scores.CHANCE)


def _errors(category: str, message: str, metrics: tuple[str, ...]) -> list[ScoreResult]:
    return [
        ScoreResult(metric=m, status="error", error_category=category, error=message)  # type: ignore[arg-type]
        for m in metrics
    ]


async def score_neuron_episode(
    target: Target,
    description: str,
    intervention_url: str | None = None,
    ctx: ScoringContext | None = None,
) -> list[ScoreResult]:
    # a description the scorer cannot read (none, too long) is the agent's score; the test set
    # and the references' ceilings are still built, from an empty description (no members)
    refusal = description_refusal(description, "observational")
    read = "" if refusal else description
    try:
        sc = await asyncio.to_thread(_score, read, target, intervention_url)
    except Exception as e:  # the intervention service or the data: not the agent's fault
        why = f"{type(e).__name__}: {e}"
        if refusal is None:
            return _errors("infrastructure", why, (*_REPORTED, *simulation.METRICS))
        # a refused answer's scores need no service: only the others are errors
        sim_refusal = description_refusal(description, "simulation")
        sim = (
            refused(simulation.METRICS, sim_refusal)
            if sim_refusal
            else _errors("infrastructure", why, simulation.METRICS)
        )
        return refused(OBSERVATIONAL, refusal) + _errors("infrastructure", why, scores.CHANCE) + sim
    ref = sc.reference_counts
    details = {
        **sc.info,
        "counts": sc.counts.model_dump(),
        "firing_share": O.firing_share(sc.counts),
        "reference": O.prf(ref).model_dump() if ref else None,
    }
    if refusal is not None:
        out = refused(OBSERVATIONAL, refusal, **details)
    else:
        out = scores.mine(sc.counts, details)
    out += scores.chance(sc.counts, details) + (scores.ceilings(ref, details) if ref else [])
    out += await score_simulation(
        target.id, description, sc.reference, sc.excerpts, ctx or ScoringContext()
    )
    if refusal is not None:  # no task matches a description that was not read: no IIA
        return out
    try:
        matched = await asyncio.to_thread(
            iia_score, description, target.hidden.spec, intervention_url
        )
    except Exception as e:
        matched = ScoreResult(
            metric="iia",
            status="error",
            error_category="infrastructure",
            error=f"{type(e).__name__}: {e}",
        )
    return out + ([matched] if matched is not None else [])


class NeuronScorer(Scorer):
    """Neurons: observational P/R/F1 of the [DESCRIPTION], the simulation score with its ceiling,
    and IIA when it matches a task."""

    metrics = (
        *OBSERVATIONAL,
        *scores.CHANCE,
        *scores.CEILINGS,
        "iia",
        *simulation.METRICS,
        *(m + simulation.CEILING for m in simulation.METRICS),
    )

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)
        return await score_neuron_episode(
            target, parsed.description or "", ctx.intervention_url, ctx
        )
