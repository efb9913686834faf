"""Model-specific RAVEL instances (RAVEL's `generate_ravel_instance.py`): the model answers every
(template, entity) prompt through the intervention service's /v1/generate; what it gets right
(matching.py) becomes (base, source) pairs with `label` (its answer on the base) and `inv_label`
(its answer on the base template filled with the source entity), per split:

- train: train templates × train entities (bases and sources);
- context_test: test templates with train entities (new templates);
- entity_test: train templates with test entities (new entities).

Sources are any attribute template of the same template split, or a Wikipedia template any entity
may fill. Scaled down for a CPU: a seeded sample of templates per attribute and of candidate
entities, of which the entities the model answers best are kept (SAEBench's rule). Instances are
cached per (model, entity type, seed, sizes); generation is checkpointed, so a killed build
resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from interp_harness.function_store.datasets import cache_dir
from interp_harness.function_store.ravel.data import RavelData, load
from interp_harness.function_store.ravel.matching import extract_label, is_correct, normalise
from interp_harness.model_services.intervention.client import InterventionClient

SPLITS = ("train", "context_test", "entity_test")
Progress = Callable[[int, int], None]


class BuildConfig(BaseModel):
    entity_type: str = "city"
    seed: int = 0
    attributes: list[str] | None = None  # None: every attribute with gold values
    n_train_entities: int = Field(24, ge=2)
    n_test_entities: int = Field(12, ge=2)
    candidate_factor: float = Field(1.5, ge=1)  # candidates screened per kept entity
    templates_per_split: int = Field(2, ge=1)  # per attribute, for the train and the test split
    wiki_templates: int = Field(2, ge=0)  # extra source templates per split (entity-free wiki)
    sources_per_base: int = Field(3, ge=1)
    max_new_tokens: int = Field(3, ge=1, le=16)
    batch_size: int = Field(32, ge=1)
    # candidate entities per entity split ("train" / "test"), instead of a seeded sample
    candidates: dict[str, list[str]] | None = None


class RavelExample(BaseModel):
    """One (base, source) pair, the README's record plus the base template's attribute."""

    input: str
    label: str
    source_input: str
    source_label: str | None
    inv_label: str
    split: str  # the base template
    source_split: str  # the source template
    entity: str
    source_entity: str
    attribute: str

    def base_span(self) -> tuple[int, int]:
        return entity_span(self.split, self.entity)

    def source_span(self) -> tuple[int, int]:
        return entity_span(self.source_split, self.source_entity)


class Instance(BaseModel):
    model: str
    config: BuildConfig
    attributes: list[str]
    templates: dict[str, dict[str, list[str]]]  # attribute -> {"train"|"test": templates}
    entities: dict[str, list[str]]  # "train" | "test" -> kept entities
    outputs: dict[str, str]  # filled prompt -> greedy continuation
    examples: dict[str, list[RavelExample]]  # split name -> pairs

    def template_attribute(self) -> dict[str, str]:
        return {t: a for a, by in self.templates.items() for ts in by.values() for t in ts}


def entity_span(template: str, entity: str) -> tuple[int, int]:
    """Character span of the entity's last character in `template % entity` (the intervention
    site is the last token of the entity mention, as in RAVEL)."""
    end = template.index("%s") + len(entity)
    return end - 1, end


def fill(template: str, entity: str) -> str:
    return template.replace("%s", entity, 1)


def cache_path(model: str, cfg: BuildConfig) -> Path:
    digest = hashlib.sha256(cfg.model_dump_json().encode()).hexdigest()[:10]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model)
    root = Path(os.environ.get("HARNESS_RAVEL_CACHE", cache_dir().parent / "ravel"))
    return root / f"{slug}-{cfg.entity_type}-seed{cfg.seed}-{digest}.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _attributes(d: RavelData, cfg: BuildConfig) -> list[str]:
    with_gold = [a for a in d.attribute_names if any(v.get(a) for v in d.attributes.values())]
    if cfg.attributes is None:
        return with_gold
    bad = [a for a in cfg.attributes if a not in with_gold]
    if bad:
        raise ValueError(f"{cfg.entity_type}: no gold values for {bad}; known: {with_gold}")
    return list(cfg.attributes)


def _pools(d: RavelData, cfg: BuildConfig, rng: random.Random) -> dict[str, list[str]]:
    sizes = {"train": cfg.n_train_entities, "test": cfg.n_test_entities}
    if cfg.candidates is None:
        return {
            s: rng.sample(d.entities(s), min(round(n * cfg.candidate_factor), len(d.entities(s))))
            for s, n in sizes.items()
        }
    for s in sizes:
        wrong = [e for e in cfg.candidates.get(s, []) if d.entity_split.get(e) != s]
        if wrong or not cfg.candidates.get(s):
            raise ValueError(f"candidates[{s!r}] must be {s} entities of {d.entity_type}: {wrong}")
    return {s: list(cfg.candidates[s]) for s in sizes}


def generate_all(
    client: InterventionClient,
    prompts: list[str],
    cfg: BuildConfig,
    checkpoint: Path,
    progress: Progress | None = None,
) -> dict[str, str]:
    """Greedy continuations of every prompt, resuming from and saving to `checkpoint`."""
    done: dict[str, str] = {}
    if checkpoint.exists():
        done = json.loads(checkpoint.read_text(encoding="utf-8"))
    todo = [p for p in dict.fromkeys(prompts) if p not in done]
    total = len(set(prompts))
    for i in range(0, len(todo), cfg.batch_size):
        chunk = todo[i : i + cfg.batch_size]
        res = client.generate({"prompts": chunk, "max_new_tokens": cfg.max_new_tokens}).results
        done.update({p: r.text for p, r in zip(chunk, res, strict=True)})
        _write_atomic(checkpoint, json.dumps(done))
        if progress:
            progress(total - len(todo) + i + len(chunk), total)
    if progress and not todo:
        progress(total, total)
    return done


def build(
    client: InterventionClient,
    cfg: BuildConfig,
    progress: Progress | None = None,
    use_cache: bool = True,
) -> Instance:
    model = client.model().id
    path = cache_path(model, cfg)
    if use_cache and path.exists():
        return Instance.model_validate_json(path.read_text(encoding="utf-8"))
    d = load(cfg.entity_type)
    rng = random.Random(cfg.seed)
    attrs = _attributes(d, cfg)
    templates = {
        a: {
            s: rng.sample(d.templates(a, s), min(cfg.templates_per_split, len(d.templates(a, s))))
            for s in ("train", "test")
        }
        for a in attrs
    }
    t_attr = {t: a for a, by in templates.items() for ts in by.values() for t in ts}
    pools = _pools(d, cfg, rng)
    train_t = [t for a in attrs for t in templates[a]["train"]]
    test_t = [t for a in attrs for t in templates[a]["test"]]
    pairs = [(t, e) for t in train_t for e in pools["train"] + pools["test"]]
    pairs += [(t, e) for t in test_t for e in pools["train"]]
    outputs = generate_all(
        client, [fill(t, e) for t, e in pairs], cfg, path.with_suffix(".outputs.json"), progress
    )

    def ok(t: str, e: str) -> bool:
        a = t_attr[t]
        return is_correct(outputs[fill(t, e)], d.attributes[e].get(a, ""), a, fill(t, e))

    kept = {}
    for s, n in (("train", cfg.n_train_entities), ("test", cfg.n_test_entities)):
        score = Counter({e: sum(ok(t, e) for t, e2 in pairs if e2 == e) for e in pools[s]})
        kept[s] = sorted(e for e, _ in score.most_common(n))
    wiki = {s: d.wiki_templates(s)[: cfg.wiki_templates] for s in ("train", "test")}
    plan = {
        "train": (train_t, kept["train"], train_t + wiki["train"]),
        "context_test": (test_t, kept["train"], test_t + wiki["test"]),
        "entity_test": (train_t, kept["test"], train_t + wiki["train"]),
    }
    examples = {
        name: _pairs(rng, base_t, ents, src_t, outputs, ok, t_attr, cfg.sources_per_base)
        for name, (base_t, ents, src_t) in plan.items()
    }
    inst = Instance(
        model=model,
        config=cfg,
        attributes=attrs,
        templates=templates,
        entities=kept,
        outputs=outputs,
        examples=examples,
    )
    _write_atomic(path, inst.model_dump_json())
    return inst


def _pairs(
    rng: random.Random,
    base_templates: list[str],
    entities: list[str],
    source_templates: list[str],
    outputs: dict[str, str],
    ok: Callable[[str, str], bool],
    t_attr: dict[str, str],
    k: int,
) -> list[RavelExample]:
    """For each correctly answered base, k sources whose entity the model also answers correctly
    on the base template with a different label; label counts balanced as RAVEL's test generators
    do (weight 1/(20 + times the inv_label was already chosen))."""
    out: list[RavelExample] = []
    for t in base_templates:
        chosen: Counter[str] = Counter()
        for e in entities:
            if not ok(t, e):
                continue
            label = extract_label(outputs[fill(t, e)])
            cands = []
            for e2 in entities:
                inv = extract_label(outputs[fill(t, e2)])
                if e2 != e and ok(t, e2) and normalise(inv) != normalise(label):
                    cands.append((e2, inv))
            for _ in range(min(k, len(cands))):
                weights = [1 / (20 + chosen[normalise(inv)]) for _, inv in cands]
                e2, inv = cands.pop(rng.choices(range(len(cands)), weights)[0])
                chosen[normalise(inv)] += 1
                st = rng.choice(source_templates)
                src = fill(st, e2)
                out.append(
                    RavelExample(
                        input=fill(t, e),
                        label=label,
                        source_input=src,
                        source_label=extract_label(outputs[src]) if src in outputs else None,
                        inv_label=inv,
                        split=t,
                        source_split=st,
                        entity=e,
                        source_entity=e2,
                        attribute=t_attr[t],
                    )
                )
    return out
