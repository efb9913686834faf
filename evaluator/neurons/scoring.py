"""Scores of a finished episode on a neuron target: observational P/R/F1 of the agent's
[DESCRIPTION], next to the reference explanation's on the same test set when there is one.

- GPT-2 XL neurons of the released data: Q = that neuron's released items, a(q) from the shipped
  activations (no model needed); the reference is the GPT-4 explanation with its shipped labels.
- Other neurons (SmolLM2): Q built live (evaluator.neurons.testset) from a corpus sample through
  the intervention service (HARNESS_INTERVENTION_URL); no reference exists.
Membership of the agent's explanation is decided lexically offline (evaluator.neurons.membership).
When the explanation matches one of the 12 intervention tasks, the neuron's IIA on that task is
scored too (evaluator.neurons.task_iia).
A service failure is an error state (infrastructure), never a 0.
"""

from __future__ import annotations

import asyncio
import os
import zlib

from evaluator.api import EpisodeStats, ScoreResult
from evaluator.neurons import observational as O
from evaluator.neurons import released, testset
from evaluator.neurons.membership import LexicalMembership
from evaluator.neurons.task_iia import iia_score
from evaluator.parsing import parse_answer
from evaluator.scorer import Scorer, ScoringContext
from function_store.intervention_access import connect_url
from function_store.models import Target

CORPUS_SENTENCES = int(os.environ.get("HARNESS_NEURON_EVAL_SENTENCES", "64"))


def _released_record(target: Target):
    from function_store.neurons import data

    spec = target.hidden.spec
    name = f"{spec['layer']}:{spec['index']}"
    return next((r for r in data.load() if r.neuron == name), None)


def _score(
    description: str, target: Target, url: str | None
) -> tuple[O.PRF, O.Counts, O.PRF | None, dict]:
    member = LexicalMembership(description)
    spec = target.hidden.spec
    unit = f"{spec['layer']}:{spec['index']}"
    rec = _released_record(target) if spec["model"] == "gpt2-xl" else None
    if rec is not None:
        obs = [O.Observation(unit, member(it.span), it.max_activation > 0) for it in rec.items]
        ref = O.prf(O.counts(released.observations([rec], "activations")))
        info = {"test_set": f"released items of {len(rec.items)} sentences"}
    else:
        texts = testset.corpus_sentences(CORPUS_SENTENCES, seed=zlib.crc32(unit.encode()))
        texts += testset.carriers(sorted(member.members))
        client, _ = connect_url(spec["model"], url)  # the neuron's own model, or an error
        with client:
            acts = testset.read_activations(client, texts, spec["layer"], spec["index"])
        obs = testset.build(acts, member, unit)
        ref = None  # only the released GPT-2 XL neurons have a reference explanation
        info = {
            "test_set": f"{CORPUS_SENTENCES} released sentences + {len(texts) - CORPUS_SENTENCES} "
            "carrier sentences of the claimed strings, live activations"
        }
    info["decider"] = "lexical (quoted strings)" if member.quoted else "lexical (content words)"
    c = O.counts(obs)
    return O.prf(c), c, ref, info


async def score_neuron_episode(
    target: Target, description: str, intervention_url: str | None = None
) -> list[ScoreResult]:
    if not description.strip():
        return [
            ScoreResult(
                metric="observational_f1",
                status="error",
                error_category="agent",
                error="no [DESCRIPTION] in the final answer",
            )
        ]
    try:
        v, c, ref, info = await asyncio.to_thread(_score, description, target, intervention_url)
    except Exception as e:  # the intervention service or the data: not the agent's fault
        return [
            ScoreResult(
                metric="observational_f1",
                status="error",
                error_category="infrastructure",
                error=f"{type(e).__name__}: {e}",
            )
        ]
    details = {
        **info,
        "counts": c.model_dump(),
        "reference": ref.model_dump() if ref else None,
    }
    out = [
        ScoreResult(metric=f"observational_{m}", value=getattr(v, m), details=details)
        for m in O.METRICS
    ]
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
    """Neurons: observational P/R/F1 of the [DESCRIPTION], and IIA when it matches a task."""

    metrics = (*(f"observational_{m}" for m in O.METRICS), "iia")

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)
        return await score_neuron_episode(target, parsed.description or "", ctx.intervention_url)
