"""find-gen entities/relations: sizes, determinism per seed, unit tests as FIND's."""

from __future__ import annotations

import json
import logging

import pytest

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.entities_relations.concepts import ENTITY_CONCEPTS, RELATIONS
from interp_harness.function_store.entities_relations.targets import (
    entities_find_gen,
    relations_find_gen,
)


def _load(family: str, seed: int):
    source = {"entities": entities_find_gen, "relations": relations_find_gen}[family]
    return source(family, CatalogOptions(gen_seed=seed))


@pytest.fixture(scope="module")
def released_positives() -> dict[str, set[str]]:
    data = json.loads(data_path("find/neurons_entities/data.json").read_text())
    tests = json.loads(data_path("find/neurons_entities/unit_test_data.json").read_text())
    return {
        d["concept1"]: {v[c - 1] for v, c in zip(t["test_vec"], t["correct_inx"], strict=True)}
        for d, t in zip(data[:140], tests[:140], strict=True)
    }


def test_entities_shape_and_determinism(released_positives):
    a, b, c = _load("entities", 5), _load("entities", 5), _load("entities", 6)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert [t.hidden.spec["concepts"] for t in a] != [t.hidden.spec["concepts"] for t in c]
    assert len(a) == 200 and a[7].id == "find-gen/entities/s5/f00007"
    assert sorted(t.hidden.spec["concepts"][0] for t in a[:140]) == sorted(ENTITY_CONCEPTS)
    pairs = [tuple(t.hidden.spec["concepts"]) for t in a[140:]]
    assert len(pairs) == 60 and len({frozenset(p) for p in pairs}) == 60
    assert all(p[0] != p[1] for p in pairs)
    for t in a:
        concepts = t.hidden.spec["concepts"]
        assert len(t.unit_tests) == 10 and len(t.exemplars) == 10
        own = set().union(*(released_positives[c] for c in concepts))
        for i, u in enumerate(t.unit_tests):
            assert len(u.inputs) == 3 and u.outputs is None and u.correct in (1, 2, 3)
            want = released_positives[concepts[0 if i < 5 or len(concepts) == 1 else 1]]
            assert u.inputs[u.correct - 1] in want
            distractors = [w for j, w in enumerate(u.inputs) if j != u.correct - 1]
            assert not set(distractors) & own  # distractors: positives of other functions
        assert 1 <= len(set(t.exemplars) & own) <= 3


def test_relations_shape_and_corrupted_tests():
    rels = _load("relations", 2)
    assert len(rels) == 75 and [t.variant for t in rels[::25]] == [
        "clean",
        "corruption-a",
        "corruption-b",
    ]
    assert rels[26].id == "find-gen/relations/s2/f00026"
    assert {(t.hidden.spec["concept1"], t.hidden.spec["concept2"]) for t in rels[:25]} == {
        r[:2] for r in RELATIONS
    }
    for j in range(25):
        clean, a, b = rels[j], rels[25 + j], rels[50 + j]
        assert (
            a.hidden.spec["concept1"] == clean.hidden.spec["concept1"] == b.hidden.spec["concept1"]
        )
        assert clean.exemplars == a.exemplars == b.exemplars and 8 <= len(clean.exemplars) <= 10
        tmpl = a.hidden.spec["user_template"]
        assert tmpl.startswith("I am going to give you an input. If") and tmpl.endswith(
            "Input: {input}"
        )
        assert "If  " not in tmpl  # the release's stray leading space is fixed
        for t in (a, b):
            us = t.unit_tests
            assert len(us) == 10
            assert [u.outputs[u.correct - 1] for u in us[:2]] == ["undefined", "undefined"]
            assert all(u.outputs[u.correct - 1] != "undefined" for u in us[2:])
        for u in clean.unit_tests:
            assert len(u.inputs) == len(u.outputs) == 3
            assert u.outputs[u.correct - 1] == u.outputs[u.correct - 1].strip()


def test_without_data_dir_definitions_remain(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with caplog.at_level(logging.WARNING):
        ents, rels = _load("entities", 0), _load("relations", 0)
    assert len(ents) == 200 and len(rels) == 75
    assert all(not t.unit_tests and not t.exemplars for t in ents + rels)
    assert "unit tests and exemplars are left empty" in caplog.text
    assert rels[0].hidden.spec["user_template"].endswith("Input: {input}")
