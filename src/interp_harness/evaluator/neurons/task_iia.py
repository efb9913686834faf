"""IIA of an agent's neuron when its explanation matches one of the 12 tasks (issue 14: "scored
by IIA@K when a task matches"). For one neuron, IIA@K reduces to the IIA of that neuron alone on
the matched task, at the neuron's layer and the paper's positions.

Matching is lexical (TF-IDF cosine of the explanation against each task's concept text, the same
offline similarity the probe's neuron selection uses); an embedding model would match more
paraphrases. Below MATCH_THRESHOLD no task matches and no IIA score is given.
"""

from __future__ import annotations

import os
import zlib

from interp_harness.evaluator.neurons import iia as I
from interp_harness.evaluator.neurons.probe import lexical_similarity
from interp_harness.function_store.intervention_access import connect_url
from interp_harness.function_store.neurons.tasks import TASKS, Task
from interp_harness.sdk import ScoreResult

MATCH_THRESHOLD = 0.25
PAIRS = int(os.environ.get("HARNESS_NEURON_IIA_PAIRS", "32"))


def matching_task(description: str) -> tuple[Task, float] | None:
    tasks = list(TASKS.values())
    sims = lexical_similarity(description, [t.concept for t in tasks])
    best = int(sims.argmax())
    return (tasks[best], float(sims[best])) if sims[best] >= MATCH_THRESHOLD else None


def iia_score(description: str, spec: dict, url: str | None = None) -> ScoreResult | None:
    """None when no task matches; else the neuron's IIA on the matched task (raises when the
    intervention service at `url` (None: the operator's) is missing or serves another model: the
    caller records an error)."""
    found = matching_task(description)
    if found is None:
        return None
    task, sim = found
    details = {"task": task.name, "task_similarity": round(sim, 3)}
    client, info = connect_url(spec["model"], url)
    with client:
        kept = I.filter_fillers(client, task)
        seed = zlib.crc32(f"{spec['layer']}:{spec['index']}:{task.name}".encode())
        pairs = I.make_pairs(kept, PAIRS, seed=seed)
        details |= {"fillers_kept": len(kept), "pairs": len(pairs)}
        if not pairs:
            details["note"] = "the model solves too few of the task's prompts to form pairs"
            return ScoreResult(metric="iia", value=None, details=details)
        value = I.iia(client, task, pairs, [spec["layer"]], info.n_layers, neurons=[spec["index"]])
    return ScoreResult(metric="iia", value=value, details=details)
