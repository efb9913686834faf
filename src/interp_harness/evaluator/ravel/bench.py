"""`harness ravel eval`: train each method for each target attribute on the instance's train
split, register its featurizer with the intervention service, interchange over a test split and
score Cause / Isolate / Disentangle. Target-independent runs (whole vector, random direction) are
interchanged once and scored for every attribute."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from interp_harness.evaluator.ravel import interchange
from interp_harness.evaluator.ravel.methods import METHODS, Hyper, TrainContext
from interp_harness.evaluator.ravel.methods.featurize import feature_dims
from interp_harness.evaluator.ravel.methods.local import LocalModel
from interp_harness.evaluator.ravel.scores import ExampleOutcome, disentangle
from interp_harness.function_store.ravel.instances import Instance, RavelExample
from interp_harness.model_services.intervention.client import InterventionClient

TARGET_FREE = ("nothing", "full", "random")


class MethodRow(BaseModel):
    method: str
    attribute: str
    dims: int | None  # features swapped (None: the whole vector / nothing)
    cause: float
    isolate: float
    disentangle: float
    n_cause: int
    n_isolate: int
    train_s: float
    eval_s: float


def eval_examples(
    inst: Instance, split: str, per_template: int, seed: int = 0
) -> list[RavelExample]:
    """At most `per_template` pairs per base template (seeded), to bound CPU time."""
    by: dict[str, list[RavelExample]] = {}
    for e in inst.examples[split]:
        by.setdefault(e.split, []).append(e)
    rng = random.Random(seed)
    return [x for t in sorted(by) for x in rng.sample(by[t], min(per_template, len(by[t])))]


def run_methods(
    client: InterventionClient,
    local: LocalModel,
    inst: Instance,
    targets: Sequence[str],
    methods: Sequence[str],
    split: str = "context_test",
    per_template: int = 8,
    max_new_tokens: int = 1,
    hyper: Hyper | None = None,
    on_row: Callable[[MethodRow], None] | None = None,
) -> list[MethodRow]:
    unknown = [m for m in methods if m not in METHODS and m != "nothing"]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; known: {['nothing', *METHODS]}")
    bad = [a for a in targets if a not in inst.attributes]
    if bad:
        raise ValueError(f"attributes {bad} not in the instance ({inst.attributes})")
    examples = eval_examples(inst, split, per_template)
    rows: list[MethodRow] = []
    cache: dict[str, tuple[list[ExampleOutcome], int | None, float, float]] = {}
    for name in methods:  # method-major: every target gets the cheap methods first
        for target in targets:
            if name in cache:
                outcomes, dims, train_s, eval_s = cache[name]
            else:
                outcomes, dims, train_s, eval_s = _one(
                    client, local, inst, target, name, examples, max_new_tokens, hyper
                )
                if name in TARGET_FREE:
                    cache[name] = (outcomes, dims, train_s, eval_s)
            s = disentangle(outcomes, target, max_new_tokens)
            row = MethodRow(
                method=name, dims=dims, train_s=train_s, eval_s=eval_s, **s.model_dump()
            )
            rows.append(row)
            if on_row:
                on_row(row)
    return rows


def _one(
    client: InterventionClient,
    local: LocalModel,
    inst: Instance,
    target: str,
    name: str,
    examples: list[RavelExample],
    max_new_tokens: int,
    hyper: Hyper | None,
) -> tuple[list[ExampleOutcome], int | None, float, float]:
    t0 = time.monotonic()
    if name == "nothing":
        what, dims = interchange.NOTHING, None
    else:
        spec = METHODS[name](TrainContext(local, inst, target, hyper or Hyper()))
        if spec is None:
            what, dims = interchange.WHOLE, None
        else:
            client.register_featurizer(spec)
            what, dims = (spec.id, None), len(feature_dims(spec))
    t1 = time.monotonic()
    outcomes = interchange.run(client, examples, local.layer, what, max_new_tokens)
    return outcomes, dims, t1 - t0, time.monotonic() - t1
