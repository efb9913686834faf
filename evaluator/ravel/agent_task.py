"""Scores of a finished episode on a RAVEL localisation target (`ravel/<model>/<type>/<attr>`).

The answer (`[DESCRIPTION]: ...` ends the episode, as for every target; then `[LAYER]: 8` and
`[NEURONS]: 3, 17, 250`) becomes a mask featurizer over the residual
dims at the entity's last token (the dims with mask 1 are its features); it is registered with the
intervention service (HARNESS_INTERVENTION_URL) and interchanged over the held-out entity split of
the target's instance (function_store.ravel.targets.INSTANCES, built once and cached); Cause,
Isolate and Disentangle follow (scores.py). A malformed answer is an agent error; a service
failure an infrastructure error: never a 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading

import torch

from evaluator.api import ScoreResult
from evaluator.ravel import interchange
from evaluator.ravel.bench import eval_examples
from evaluator.ravel.methods.featurize import mask_spec
from evaluator.ravel.scores import disentangle
from function_store.models import Target

PER_TEMPLATE = int(os.environ.get("HARNESS_RAVEL_EVAL_PER_TEMPLATE", "16"))
METRICS = ("disentangle", "cause", "isolate")
_LAYER = re.compile(r"\[LAYER\]:\s*(-?\d+)")
_NEURONS = re.compile(r"\[NEURONS\]:\s*([-\d,\s]+)")
_BUILD_LOCK = threading.Lock()  # one instance build at a time (its checkpoint file is shared)


class AnswerError(ValueError):
    """The final answer is not a localisation; the message says why."""


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


def _score(target: Target, layer: int, dims: list[int]) -> list[ScoreResult]:
    from function_store.neurons.runner import connect
    from function_store.ravel.instances import build
    from function_store.ravel.targets import INSTANCES

    spec = target.hidden.spec
    cfg = INSTANCES[spec["entity_type"]]
    client, info = connect(spec["model"], None)
    with client:
        if not 0 <= layer < info.n_layers:
            raise AnswerError(f"[LAYER] must be in 0..{info.n_layers - 1}")
        if dims[0] < 0 or dims[-1] >= info.hidden_size:
            raise AnswerError(f"[NEURONS] must be dims in 0..{info.hidden_size - 1}")
        with _BUILD_LOCK:
            inst = build(client, cfg)
        examples = eval_examples(inst, spec["split"], PER_TEMPLATE)
        mask = torch.zeros(info.hidden_size)
        mask[dims] = 1.0
        key = hashlib.sha256(f"{target.id}:{layer}:{dims}".encode()).hexdigest()[:16]
        fid = f"ravel-agent-{key}"
        client.register_featurizer(mask_spec(fid, mask, layer))
        outcomes = interchange.run(client, examples, layer, (fid, None))
    s = disentangle(outcomes, spec["attribute"])
    details = {
        "layer": layer,
        "dims": len(dims),
        "split": spec["split"],
        "n_cause": s.n_cause,
        "n_isolate": s.n_isolate,
        "featurizer": "mask over block_output at the entity's last token",
    }
    return [
        ScoreResult(metric=m, status="ok", value=float(getattr(s, m)), details=dict(details))
        for m in METRICS
    ]


async def score_ravel_episode(target: Target, final_answer: str) -> list[ScoreResult]:
    try:
        layer, dims = parse_localisation(final_answer)
        return await asyncio.to_thread(_score, target, layer, dims)
    except AnswerError as e:
        return _errors("agent", str(e))
    except Exception as e:  # the intervention service, the instance: not the agent's fault
        return _errors("infrastructure", f"{type(e).__name__}: {e}")
