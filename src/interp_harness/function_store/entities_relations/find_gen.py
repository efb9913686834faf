"""find-gen entities (140 atomic + 60 composed) and relations (25 x clean/corruption-a/corruption-b).

Deterministic per seed. The concepts and relations are FIND's (its `data.json` lists, in
`interp_harness.function_store.entities_relations.concepts`); the seed chooses the order, the composed pairs, the exemplars and
the unit-test triplets. Unit tests are laid out as FIND's `unit_test_data.json`, reusing the
released positives (entity words, relation input/output pairs) from the data directory; without it,
definitions and prompts are still built but unit tests and exemplars are left empty (with a log
warning).

Fixes vs the release (see docs/find-gen.md, "Entities and relations"): relation prompts get the
missing spaces after "input." and "Input:"; the stray leading space of one exception is dropped;
relation outputs in unit tests are stripped of the backbone's leading spaces.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass, field

from interp_harness.function_store.datasets import DataUnavailable, data_path
from interp_harness.function_store.entities_relations.concepts import ENTITY_CONCEPTS, RELATIONS
from interp_harness.function_store.entities_relations.find_v1 import (
    RELATION_VARIANTS,
    entity_truth,
    neural_target,
    relation_truth,
)
from interp_harness.function_store.models import UnitTest
from interp_harness.sdk import Target

log = logging.getLogger(__name__)

N_COMPOSED = 60
N_TESTS = 10


# --- released material ---------------------------------------------------------------------


def _released(rel: str) -> list | None:
    try:
        return json.loads(data_path(rel).read_text(encoding="utf-8"))
    except DataUnavailable as e:
        log.warning("find-gen: %s; unit tests and exemplars are left empty", e)
        return None


def _entity_positives() -> dict[str, list[str]] | None:
    """concept -> the released unit-test positives of its atomic module (f00000-f00139)."""
    data = _released("find/neurons_entities/data.json")
    tests = _released("find/neurons_entities/unit_test_data.json") if data else None
    if not data or not tests:
        return None
    out: dict[str, list[str]] = {}
    for d, t in zip(data[: len(ENTITY_CONCEPTS)], tests, strict=False):
        words = [vec[c - 1] for vec, c in zip(t["test_vec"], t["correct_inx"], strict=True)]
        out.setdefault(d["concept1"], [])
        out[d["concept1"]] += [w for w in words if w not in out[d["concept1"]]]
    return out


@dataclass
class _RelationPairs:
    valid: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # variant -> pairs
    undefined: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def _relation_pairs() -> list[_RelationPairs] | None:
    """Per base relation k: released correct (input, output) pairs of f(k), f(25+k), f(50+k);
    for the corrupted ones the first two are the `undefined` subdomain items, as FIND's are."""
    tests = _released("find/neurons_relations/unit_test_data.json")
    if not tests:
        return None
    n = len(RELATIONS)
    out = [_RelationPairs() for _ in range(n)]
    for i, t in enumerate(tests[: 3 * n]):
        pairs = [
            (vec[0][c - 1].strip(), vec[1][c - 1].strip())
            for vec, c in zip(t["test_vec"], t["correct_inx"], strict=True)
        ]
        k, variant = i % n, RELATION_VARIANTS[i // n]
        if variant == "clean":
            out[k].valid[variant] = pairs
        else:
            out[k].undefined[variant] = [p for p in pairs[:2] if p[1] == "undefined"]
            out[k].valid[variant] = [p for p in pairs[2:] if p[1] != "undefined"]
    return out


# --- unit tests ------------------------------------------------------------------------------


def _triplet(rng: random.Random, correct, distractors: list) -> tuple[list, int]:
    items = rng.sample(distractors, 2)
    pos = rng.randint(1, 3)
    items.insert(pos - 1, correct)
    return items, pos


def _entity_tests(
    rng: random.Random, positives: list[str], others: list[str], own: set[str]
) -> list[UnitTest]:
    pool = sorted({w for w in others if w not in own})
    tests = []
    for w in positives[:N_TESTS]:
        items, pos = _triplet(rng, w, pool)
        tests.append(UnitTest(inputs=items, correct=pos))
    return tests


def _relation_tests(
    rng: random.Random, pairs: list[tuple[str, str]], others: list[tuple[str, str]]
) -> list[UnitTest]:
    own_inputs = {p[0] for p in pairs}
    pool = sorted({p for p in others if p[0] not in own_inputs})
    tests = []
    for p in pairs[:N_TESTS]:
        items, pos = _triplet(rng, p, pool)
        tests.append(
            UnitTest(inputs=[i for i, _ in items], outputs=[o for _, o in items], correct=pos)
        )
    return tests


# --- entities --------------------------------------------------------------------------------


def _entity_target(seed: int, idx: int, concepts: list[str]) -> Target:
    tid = f"find-gen/entities/s{seed}/f{idx:05d}"
    variant = "atomic" if len(concepts) == 1 else "composed"
    return neural_target("find-gen", tid, "entities", variant, entity_truth(concepts, tid))


def generate_entities(seed: int) -> list[Target]:
    rng = random.Random(f"find-gen/entities/{seed}")
    atomic = list(ENTITY_CONCEPTS)
    rng.shuffle(atomic)
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    while len(pairs) < N_COMPOSED:
        a, b = rng.sample(ENTITY_CONCEPTS, 2)
        if frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            pairs.append((a, b))
    defs = [[c] for c in atomic] + [list(p) for p in pairs]
    targets = [_entity_target(seed, i, d) for i, d in enumerate(defs)]

    positives = _entity_positives()
    if positives is None:
        return targets
    for t, concepts in zip(targets, defs, strict=True):
        own = [w for c in concepts for w in positives.get(c, [])]
        others = [w for c, ws in positives.items() if c not in concepts for w in ws]
        if len(concepts) == 1:
            chosen = rng.sample(own, min(N_TESTS, len(own)))
        else:  # triplets 1-5 from concept1, 6-10 from concept2, as in FIND's release
            p1 = positives.get(concepts[0], [])
            p2 = [w for w in positives.get(concepts[1], []) if w not in p1]
            chosen = rng.sample(p1, min(5, len(p1))) + rng.sample(p2, min(5, len(p2)))
        t.unit_tests = _entity_tests(rng, chosen, others, set(own))
        # Exemplars as in FIND's `initial.json`: 10 words, 1-3 of them the module's own positives.
        k = min(rng.choice((1, 2, 2, 3)), len(own))
        mine = rng.sample(sorted(set(own)), k)
        rest = rng.sample(sorted(set(others) - set(own)), 10 - k)
        t.exemplars = mine + rest
        rng.shuffle(t.exemplars)
    return targets


# --- relations -------------------------------------------------------------------------------


def generate_relations(seed: int) -> list[Target]:
    rng = random.Random(f"find-gen/relations/{seed}")
    order = list(range(len(RELATIONS)))
    rng.shuffle(order)
    n = len(order)
    released = _relation_pairs()
    if released is not None:
        all_inputs = sorted({p[0] for r in released for ps in r.valid.values() for p in ps})
    targets: list[Target] = []
    for v, variant in enumerate(RELATION_VARIANTS):
        for j, k in enumerate(order):
            con1, con2, exc_a, exc_b = RELATIONS[k]
            exception = {"clean": None, "corruption-a": exc_a, "corruption-b": exc_b}[variant]
            tid = f"find-gen/relations/s{seed}/f{v * n + j:05d}"
            hidden = relation_truth(con1, con2, exception, tid, fixed=True)
            targets.append(neural_target("find-gen", tid, "relations", variant, hidden))
    if released is None:
        return targets
    # Exemplars: one list per base relation, shared by its clean and corrupted modules, as released.
    exemplars = {k: rng.sample(all_inputs, rng.choice((8, 9, 10))) for k in order}
    for v, variant in enumerate(RELATION_VARIANTS):
        for j, k in enumerate(order):
            t = targets[v * n + j]
            rp = released[k]
            others = [
                p for kk, r in enumerate(released) if kk != k for ps in r.valid.values() for p in ps
            ]
            if variant == "clean":
                union = _dedupe([p for ps in rp.valid.values() for p in ps])
                pairs = rng.sample(union, min(N_TESTS, len(union)))
            else:  # first two from the corrupted subdomain, output `undefined`, as released
                own = list(rp.valid.get(variant, []))
                rng.shuffle(own)
                pairs = list(rp.undefined.get(variant, []))[:2] + own[: N_TESTS - 2]
            t.unit_tests = _relation_tests(rng, pairs, others)
            t.exemplars = list(exemplars[k])
    return targets


def _dedupe(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, tuple[str, str]] = {}
    for p in pairs:
        seen.setdefault(p[0], p)
    return list(seen.values())
