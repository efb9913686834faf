"""find-v1 entities (200) and relations (75) from the released metadata (`data.json`,
`initial.json`, `unit_test_data.json`).

Prompts are rebuilt from `data.json` with our typed templates (`interp_harness.function_store.entities_relations.backbone_prompts`);
the corrupted relation text is not shipped: inferred. Exemplars come from `initial`, unit tests
from `unit_test_data.json` (`correct_inx` is 1-based, as `UnitTest.correct`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.entities_relations import backbone_prompts as P
from interp_harness.function_store.models import Family, UnitTest
from interp_harness.sdk import HiddenTruth, PublicMeta, Target, make_canary

N_RELATIONS = 25
RELATION_VARIANTS = ("clean", "corruption-a", "corruption-b")


def _read(rel: str) -> Any:
    return json.loads(data_path(rel).read_text(encoding="utf-8"))


def entity_truth(
    concepts: list[str], target_id: str, *, template: str | None = None
) -> HiddenTruth:
    """Hidden part of an entity module (atomic: one concept; composed: an OR of two)."""
    if len(concepts) == 1:
        tmpl = template or P.entity_template(concepts[0])
        desc = (
            f"Returns a value close to 1 for words related to {concepts[0]} "
            "and close to 0 for other words."
        )
    else:
        tmpl = template or P.composed_entity_template(concepts[0], concepts[1])
        desc = (
            f"Returns a value close to 1 for words related to {concepts[0]} or to {concepts[1]} "
            "and close to 0 for other words."
        )
    return HiddenTruth(
        runner="entity",
        spec={
            "kind": "atomic" if len(concepts) == 1 else "composed",
            "concepts": concepts,
            "system_prompt": P.ENTITY_SYSTEM,
            "user_template": tmpl,
        },
        description=desc,
        canary=make_canary(target_id),
    )


def relation_truth(
    concept1: str, concept2: str, exception: str | None, target_id: str, *, fixed: bool = False
) -> HiddenTruth:
    desc = (
        f"Maps an input that is {concept1} to {concept2}; "
        f"returns 'undefined' when the input is not {concept1}."
    )
    corruption = None
    if exception is not None:
        cond = exception.strip()
        desc += f" Corrupted subdomain: when {cond}, it returns 'undefined' instead."
        corruption = {"condition": cond, "output": "undefined"}
    return HiddenTruth(
        runner="relation",
        spec={
            "concept1": concept1,
            "concept2": concept2,
            "exception": exception,
            "system_prompt": P.RELATION_SYSTEM,
            "user_template": P.relation_template(concept1, concept2, exception, fixed=fixed),
        },
        description=desc,
        corruption=corruption,
        canary=make_canary(target_id),
    )


def neural_target(
    dataset: str, target_id: str, family: Family, variant: str, hidden: HiddenTruth, **extra: Any
) -> Target:
    """An entity or relation target: word inputs, FIND's `neurons_<family>` prompt family."""
    return Target(
        id=target_id,
        dataset=dataset,
        family=family,
        variant=variant,
        public=PublicMeta(input_kind="word", prompt_family=f"neurons_{family}"),
        hidden=hidden,
        **extra,
    )


def _unit_tests(entry: dict[str, Any], with_outputs: bool) -> list[UnitTest]:
    out = []
    for vec, correct in zip(entry["test_vec"], entry["correct_inx"], strict=True):
        if with_outputs:
            out.append(UnitTest(inputs=list(vec[0]), outputs=list(vec[1]), correct=int(correct)))
        else:
            out.append(UnitTest(inputs=list(vec), correct=int(correct)))
    return out


def _released(family: Family) -> Iterator[tuple[int, str, dict[str, Any], dict[str, Any]]]:
    """(index, target id, data.json record, Target extras: unit tests and exemplars) per module."""
    data = _read(f"find/neurons_{family}/data.json")
    tests = {e["name"]: e for e in _read(f"find/neurons_{family}/unit_test_data.json")}
    for i, d in enumerate(data):
        name = f"f{i:05d}"
        entry = tests.get(name)
        extra = {
            "unit_tests": _unit_tests(entry, family == "relations") if entry is not None else [],
            "exemplars": list(d.get("initial") or []),
        }
        yield i, f"find-v1/{family}/{name}", d, extra


def load_entities() -> list[Target]:
    out = []
    for _, tid, d, extra in _released("entities"):
        concepts = [d["concept1"]] + ([d["concept2"]] if d.get("concept2") else [])
        variant = "atomic" if len(concepts) == 1 else "composed"
        out.append(
            neural_target("find-v1", tid, "entities", variant, entity_truth(concepts, tid), **extra)
        )
    return out


def load_relations() -> list[Target]:
    out = []
    for i, tid, d, extra in _released("relations"):
        # The released exception strings are kept verbatim (f00061's has a leading space).
        hidden = relation_truth(d["concept1"], d["concept2"], d.get("exeption"), tid)
        variant = RELATION_VARIANTS[i // N_RELATIONS]
        out.append(neural_target("find-v1", tid, "relations", variant, hidden, **extra))
    return out
