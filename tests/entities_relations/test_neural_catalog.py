"""find-v1 entities/relations from the released metadata (`data.json`, `unit_test_data.json`)."""

from __future__ import annotations

import json

import pytest

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.runtime import NoBackboneConfigured, RuntimeContext, call_target


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog()


def test_entities_counts_ids_variants(cat):
    ents = cat.list(dataset="find-v1", family="entities")
    assert len(ents) == 200
    assert ents[0].id == "find-v1/entities/f00000" and ents[199].id == "find-v1/entities/f00199"
    assert sum(t.variant == "atomic" for t in ents) == 140
    assert all(t.variant == "composed" for t in ents[140:])
    t = ents[0]
    assert t.public.input_kind == "word" and t.public.prompt_family == "neurons_entities"
    assert t.hidden.runner == "entity" and t.hidden.spec["concepts"] == ["sport organizations"]
    # FIND's data.json: f00150 = computing + processes and manufacturing
    assert ents[150].hidden.spec["concepts"] == ["computing", "processes and manufacturing"]
    assert "'processes and manufacturing'" in ents[150].hidden.spec["user_template"]
    assert t.exemplars[:3] == ["Metropolitan Museum of Art", "one third", "NFL"]  # as released


def test_entity_unit_tests_from_release(cat):
    raw = json.loads(data_path("find/neurons_entities/unit_test_data.json").read_text())
    t = cat.get("find-v1/entities/f00000")
    assert len(t.unit_tests) == 10
    u = t.unit_tests[0]
    assert u.inputs == ["fuel", "Chomsky", "NFL"] and u.outputs is None and u.correct == 3
    assert u.inputs[u.correct - 1] == "NFL"  # 1-based
    assert [x.correct for x in t.unit_tests] == raw[0]["correct_inx"]


def test_relations_counts_variants_and_corruptions(cat):
    rels = cat.list(dataset="find-v1", family="relations")
    assert len(rels) == 75
    assert [t.variant for t in rels[::25]] == ["clean", "corruption-a", "corruption-b"]
    assert rels[25].id == "find-v1/relations/f00025"
    clean, a, b = rels[0].hidden, rels[25].hidden, rels[50].hidden
    assert (
        clean.runner == "relation" and clean.spec["exception"] is None and clean.corruption is None
    )
    # FIND's relation k=0
    assert a.spec["exception"] == "the input country is in Asia"
    assert b.spec["exception"] == "the input country is in South America"
    assert "If the input country is in Asia, return 'undefined'.\n" in a.spec["user_template"]
    assert rels[0].public.prompt_family == "neurons_relations"
    u = rels[30].unit_tests[0]  # corrupted: first triplet's correct item is from the subdomain
    assert u.inputs == ["Sacramento", "Missouri", "Parsifal"] and u.correct == 1
    assert u.outputs[u.correct - 1] == "undefined"
    assert rels[0].unit_tests[0].outputs[2] == " Copenhagen"  # raw, leading space kept


def test_ground_truth_stays_hidden(cat):
    for tid in ("find-v1/entities/f00150", "find-v1/relations/f00061"):
        t = cat.get(tid)
        assert t.hidden.canary.startswith("CANARY-")
        public = t.public_view().model_dump_json()
        assert t.hidden.canary not in public and "user_template" not in public
        assert t.hidden.description and t.hidden.description not in public


def test_no_backbone_configured(cat, monkeypatch):
    monkeypatch.delenv("HARNESS_BACKBONE_URL", raising=False)
    for tid in ("find-v1/entities/f00000", "find-v1/relations/f00000"):
        with pytest.raises(NoBackboneConfigured, match="no backbone configured"):
            call_target(cat.get(tid), ["Paris"], RuntimeContext())
