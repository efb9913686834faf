"""Scores of a finished episode on a RAVEL localisation target (`ravel/<model>/<type>/<attr>`).

The answer (`[DESCRIPTION]: ...` ends the episode, as for every target) localises the attribute
in one of two forms:
- `[LAYER]: 8` and `[NEURONS]: 3, 17, 250`: a mask featurizer over those residual dims;
- `[FEATURIZER]: {"kind": "rotation", "layer": 8, "arrays": {"weight": ...}, "feature_dims": ...}`:
  a featurizer the agent uploads, in the intervention service's own format (FeaturizerSpec less
  `id` and `component`: the site is always the block output at the entity's last token).
Either is checked here with the service's own rules (shapes, orthonormal rows, finite values),
registered with the intervention service (HARNESS_INTERVENTION_URL), interchanged over the held-out
entity split of the target's instance (interp_harness.function_store.ravel.targets.INSTANCES, built once and
cached), and deleted again; Cause, Isolate and Disentangle follow (scores.py). A malformed or
too long answer (a layer or dims out of range, a featurizer the service's rules refuse) is the
agent's score: 0 on each metric with the reason (interp_harness.evaluator.answer_bounds); a
service failure is an infrastructure error state, never a 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import uuid
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from interp_harness.evaluator.answer_bounds import Refusal, refused, too_long
from interp_harness.evaluator.ravel import interchange
from interp_harness.evaluator.ravel.bench import eval_examples
from interp_harness.evaluator.ravel.methods.featurize import mask_spec
from interp_harness.evaluator.ravel.scores import disentangle
from interp_harness.function_store.intervention_access import connect_url
from interp_harness.model_services.intervention.featurizers import (
    FeaturizerError,
    FeaturizerRegistry,
)
from interp_harness.model_services.intervention.schemas import ArrayB64, FeaturizerSpec
from interp_harness.sdk import EpisodeStats, Scorer, ScoreResult, ScoringContext, Target

PER_TEMPLATE = int(os.environ.get("HARNESS_RAVEL_EVAL_PER_TEMPLATE", "16"))
METRICS = ("disentangle", "cause", "isolate")
_LAYER = re.compile(r"\[LAYER\]:\s*(-?\d+)")
_NEURONS = re.compile(r"\[NEURONS\]:\s*([-\d,\s]+)")
_FEATURIZER = re.compile(r"\[FEATURIZER\]:\s*")
COMPONENT = "block_output"  # RAVEL's site: the residual stream at the entity's last token
_BUILD_LOCK = threading.Lock()  # one instance build at a time (its checkpoint file is shared)


class AnswerError(ValueError):
    """The final answer is not a localisation; the message says why."""


class UploadedFeaturizer(BaseModel):
    """A `[FEATURIZER]` answer: the service's FeaturizerSpec without `id` and `component`, which
    the scorer sets (the agent chooses the map, not where or under which name it is served)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["rotation", "autoencoder", "mask"]
    layer: int
    arrays: dict[str, ArrayB64] | None = None
    safetensors: str | None = None
    feature_dims: list[int] | None = Field(None, min_length=1)


Localisation = tuple[int, list[int] | UploadedFeaturizer]


def parse_answer(answer: str) -> Localisation:
    """A `[FEATURIZER]: {...}` answer, else `[LAYER]` + `[NEURONS]` (parse_localisation)."""
    m = _FEATURIZER.search(answer)
    if m is None:
        return parse_localisation(answer)
    try:
        obj, _ = json.JSONDecoder().raw_decode(answer[m.end() :])
        up = UploadedFeaturizer.model_validate(obj)
    except json.JSONDecodeError as e:
        raise AnswerError(f"[FEATURIZER] must be followed by one JSON object ({e.msg})") from None
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the object"
        raise AnswerError(f"[FEATURIZER]: {where}: {first['msg']}") from None
    return up.layer, up


def parse_localisation(answer: str) -> tuple[int, list[int]]:
    """(layer, sorted distinct dims) from `[LAYER]: L` and `[NEURONS]: d1, d2, ...`."""
    layer = _LAYER.search(answer)
    dims = _NEURONS.search(answer)
    if layer is None or dims is None:
        raise AnswerError("the answer needs [LAYER]: <int> and [NEURONS]: <int>, <int>, ...")
    try:
        values = sorted({int(x) for x in re.split(r"[,\s]+", dims.group(1).strip()) if x})
    except ValueError:
        raise AnswerError("[NEURONS] must list integers") from None
    if not values:
        raise AnswerError("[NEURONS] lists no dims")
    return int(layer.group(1)), values


def _errors(category: str, msg: str) -> list[ScoreResult]:
    return [
        ScoreResult(metric=m, status="error", error_category=category, error=msg) for m in METRICS
    ]


def featurizer_spec(
    fid: str, layer: int, what: list[int] | UploadedFeaturizer, hidden_size: int
) -> FeaturizerSpec:
    """The spec to register, checked by the service's own registry rules (an AnswerError if the
    agent's featurizer breaks them, so that a bad upload is never taken for a service failure)."""
    if isinstance(what, list):
        if what[0] < 0 or what[-1] >= hidden_size:
            raise AnswerError(f"[NEURONS] must be dims in 0..{hidden_size - 1}")
        mask = torch.zeros(hidden_size)
        mask[what] = 1.0
        spec = mask_spec(fid, mask, layer)
    else:
        spec = FeaturizerSpec(
            id=fid, component=COMPONENT, replace=True, **what.model_dump(exclude_none=True)
        )
    try:
        FeaturizerRegistry({COMPONENT: hidden_size}).register(spec)
    except FeaturizerError as e:
        raise AnswerError(f"[FEATURIZER]: {e}") from None
    return spec


def _score(
    target: Target, layer: int, what: list[int] | UploadedFeaturizer, url: str | None
) -> list[ScoreResult]:
    from interp_harness.function_store.ravel.instances import build
    from interp_harness.function_store.ravel.targets import INSTANCES

    spec = target.hidden.spec
    cfg = INSTANCES[spec["entity_type"]]
    client, info = connect_url(spec["model"], url)
    with client:
        if not 0 <= layer < info.n_layers:
            raise AnswerError(f"[LAYER] must be in 0..{info.n_layers - 1}")
        # one id per scoring: two episodes with the same answer may be scored at once, and each
        # deletes its own featurizer when done
        fs = featurizer_spec(f"ravel-agent-{uuid.uuid4().hex}", layer, what, info.hidden_size)
        with _BUILD_LOCK:
            inst = build(client, cfg)
        examples = eval_examples(inst, spec["split"], PER_TEMPLATE)
        registered = client.register_featurizer(fs)
        try:
            outcomes = interchange.run(client, examples, layer, (fs.id, None))
        finally:  # the service holds a bounded number of featurizers
            client.delete_featurizer(fs.id)
    s = disentangle(outcomes, spec["attribute"])
    details = {
        "layer": layer,
        "dims": len(registered.feature_dims),
        "split": spec["split"],
        "n_cause": s.n_cause,
        "n_isolate": s.n_isolate,
        "featurizer": f"{fs.kind} over block_output at the entity's last token"
        + (" (uploaded)" if isinstance(what, UploadedFeaturizer) else ""),
    }
    return [
        ScoreResult(metric=m, status="ok", value=float(getattr(s, m)), details=dict(details))
        for m in METRICS
    ]


async def score_ravel_episode(
    target: Target, final_answer: str, intervention_url: str | None = None
) -> list[ScoreResult]:
    # checked before parsing and before the service sees any of it
    if why := too_long(final_answer, "localisation", "answer"):
        return refused(METRICS, why)
    try:
        layer, what = parse_answer(final_answer)
        return await asyncio.to_thread(_score, target, layer, what, intervention_url)
    except AnswerError as e:  # the agent's own answer: its score, never an excluded error
        return refused(METRICS, Refusal(str(e), "unparsable"))
    except Exception as e:  # the intervention service, the instance: not the agent's fault
        return _errors("infrastructure", f"{type(e).__name__}: {e}")


class RavelScorer(Scorer):
    """RAVEL: Cause, Isolate and Disentangle of the agent's localisation (the raw final answer)."""

    metrics = METRICS

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        return await score_ravel_episode(target, final_answer or "", ctx.intervention_url)
