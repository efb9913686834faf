"""Catalog source `ravel`: attribute localisation as an agent task, id
`ravel/<model>/<entity-type>/<attribute>`.

The agent reads the model through the intervention service (interp_harness.function_store.ravel.runner) and
answers a layer and a set of residual dims; it is scored by Disentangle on the instance's held-out
entity split (interp_harness.evaluator.ravel.scorer). The hidden spec carries:
- `entity_type`: the key of INSTANCES, the instance the score is computed on (its test candidates
  are the held-out entities: only the scorer reads them, never the spec the sandbox gets);
- `task`: what the agent may be shown (the attribute, train entities with their gold values, a few
  train templates per attribute); built here, where the RAVEL files are, so the sandboxed runner
  needs no data files.
"""

from __future__ import annotations

import logging

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.models import Family, model_target
from interp_harness.function_store.ravel.instances import BuildConfig
from interp_harness.sdk import Target

log = logging.getLogger(__name__)

TEMPLATES_SHOWN = 3  # train templates per attribute in the task reply
SCORE_SPLIT = "entity_test"  # held-out entities on train templates

# entity type -> the instance its targets are scored on (built once per cache by the scorer; 176
# prompts for cities, 160 for verbs on SmolLM2). Explicit candidates: SmolLM2-135M gets most randomly sampled cities wrong;
# of these it answers the most correctly are kept (10 of 14 train, 10 of 16 held-out cities).
_TRAIN_CITIES = [
    "Berlin", "Rome", "Cairo", "Madrid", "London", "Toronto", "Sydney", "Beijing", "Nairobi",
    "Chicago", "Seoul", "Mumbai", "Amsterdam", "Havana",
]  # fmt: skip
_HELD_OUT_CITIES = [
    "Paris", "Lima", "Istanbul", "Osaka", "Lagos", "Oslo", "Tehran", "Bogota", "Prague",
    "Vancouver", "Dubai", "Boston", "Milan", "Kolkata", "Brasilia", "Kyoto",
]  # fmt: skip
# verbs: the 10 + 10 of a seeded sample of 20 + 20 SmolLM2 answered best (same rule)
_TRAIN_VERBS = [
    "belong", "charge", "defeat", "evolve", "integrate", "pay", "teach", "venture", "wear", "will",
]  # fmt: skip
_HELD_OUT_VERBS = [
    "bless", "deal", "exclude", "extend", "influence", "involve", "paint", "prevent", "understand",
    "vote",
]  # fmt: skip


def _instance(
    entity_type: str, attributes: list[str], train: list[str], test: list[str]
) -> BuildConfig:
    """10 train + 10 held-out entities of the candidates, 2 templates per split, 3 sources."""
    return BuildConfig(
        entity_type=entity_type,
        attributes=attributes,
        n_train_entities=10,
        n_test_entities=10,
        templates_per_split=2,
        sources_per_base=3,
        candidates={"train": train, "test": test},
    )


INSTANCES: dict[str, BuildConfig] = {
    "city": _instance("city", ["Country", "Continent"], _TRAIN_CITIES, _HELD_OUT_CITIES),
    "verb": _instance("verb", ["Past Tense", "Singular"], _TRAIN_VERBS, _HELD_OUT_VERBS),
}
MODELS = ("smollm2",)


def ravel_id(model: str, entity_type: str, attribute: str) -> str:
    return f"ravel/{model}/{entity_type}/{attribute}"


def task_view(cfg: BuildConfig, attribute: str) -> dict:
    """What the agent may see: train entities and train templates only. A template that names a
    held-out entity (RAVEL's few-shot templates name other cities) is left out."""
    from interp_harness.function_store.ravel.data import load

    d = load(cfg.entity_type)
    held_out = (cfg.candidates or {}).get("test", [])
    attrs = cfg.attributes or []
    templates = {
        a: [t for t in d.templates(a, "train") if not any(e in t for e in held_out)][
            :TEMPLATES_SHOWN
        ]
        for a in attrs
    }
    train = (cfg.candidates or {}).get("train", [])
    return {
        "entity_type": cfg.entity_type,
        "attribute": attribute,
        "other_attributes": [a for a in attrs if a != attribute],
        "entities": {e: {a: d.attributes[e].get(a, "") for a in attrs} for e in train},
        "templates": templates,
    }


def _target(model: str, cfg: BuildConfig, attribute: str) -> Target:
    tid = ravel_id(model, cfg.entity_type, attribute)
    spec = {
        "model": model,
        "attribute": attribute,
        "entity_type": cfg.entity_type,
        "split": SCORE_SPLIT,
        "task": task_view(cfg, attribute),
    }
    what = f"localise {cfg.entity_type} {attribute}"
    return model_target(tid, "ravel", "ravel", model, "ravel", spec, what)


def load(family: Family, options: CatalogOptions) -> list[Target]:
    if family != "ravel":
        return []
    try:
        return [
            _target(m, cfg, a)
            for m in MODELS
            for cfg in INSTANCES.values()
            for a in cfg.attributes or []
        ]
    except DataUnavailable as e:
        log.warning("RAVEL targets not listed: %s", e)
        return []
