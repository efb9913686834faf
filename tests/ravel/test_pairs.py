"""Pair generation from given model answers (no model): which bases and sources are kept."""

from __future__ import annotations

import random

import pytest

from interp_harness.function_store.ravel import instances
from interp_harness.function_store.ravel.data import load
from interp_harness.function_store.ravel.instances import (
    BuildConfig,
    _pairs,
    _pools,
    entity_span,
    fill,
)

T = "%s is in the country of"
GOLD = {"A": "France", "B": "Japan", "C": "France", "D": "Peru"}
OUT = {"A": " France.", "B": " Japan,", "C": " France", "D": " Chile"}  # D is answered wrongly


def _ok(t: str, e: str) -> bool:
    return OUT[e].strip(" .,") == GOLD[e]


def test_pairs_keep_correct_bases_and_sources_with_a_different_label():
    outputs = {fill(T, e): o for e, o in OUT.items()}
    got = _pairs(random.Random(0), [T], list(OUT), [T], outputs, _ok, {T: "Country"}, k=5)
    pairs = {(x.entity, x.source_entity) for x in got}
    # D is never a base or source (wrong answer); A and C share the label France
    assert pairs == {("A", "B"), ("B", "A"), ("B", "C"), ("C", "B")}
    ab = next(x for x in got if (x.entity, x.source_entity) == ("A", "B"))
    assert (ab.label, ab.inv_label, ab.input) == (" France", " Japan", "A is in the country of")
    assert ab.attribute == "Country" and ab.split == T


def test_entity_span_is_the_last_character_of_the_entity():
    t = "People in %s speak"
    s, e = entity_span(t, "Rome")
    assert fill(t, "Rome")[s:e] == "e"


def test_candidates_must_belong_to_their_split():
    d = load("city")
    cfg = BuildConfig(candidates={"train": ["Paris"], "test": ["Lima"]})  # Paris is a test city
    with pytest.raises(ValueError, match="train entities"):
        _pools(d, cfg, random.Random(0))


def test_unknown_attribute_is_a_clear_error():
    with pytest.raises(ValueError, match="no gold values"):
        instances._attributes(load("occupation"), BuildConfig(attributes=["Gender Bias"]))
