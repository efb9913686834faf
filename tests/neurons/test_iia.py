"""Intervention mode: the tasks' data, pairing, and IIA on SmolLM2 (a real model behind the real
intervention service): a whole-residual interchange at the last layer's last token gives the
source's answer on every pair (IIA = 1); one unrelated neuron changes nothing (IIA ≈ 0)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from interp_harness.evaluator.neurons import iia as I
from interp_harness.evaluator.neurons.plot import iia_svg
from interp_harness.function_store.neurons.tasks import SLOT, TASKS, matches


def test_twelve_tasks_with_at_least_30_fillers_and_two_outputs():
    assert len(TASKS) == 12
    for t in TASKS.values():
        assert t.template.count(SLOT) == 1
        assert len(t.fillers) >= 30, t.name
        assert len({f for f, _ in t.fillers}) == len(t.fillers), t.name  # no duplicates
        assert len({e for _, e in t.fillers}) >= 2, t.name


def test_matches_by_hand():
    assert matches(" Ottawa", "Ottawa") and matches(" Ott", "Ottawa")
    assert not matches(" O", "Ottawa")  # too short to tell
    assert matches(" he", "he") and not matches(" her", "he")
    assert matches(" the", "<obj>") and not matches(".", "<obj>")


def test_pairs_have_different_outputs_and_are_seeded():
    kept = [("a", "x"), ("b", "x"), ("c", "y")]
    pairs = I.make_pairs(kept, 10, seed=1)
    assert len(pairs) == 10 and all(p.base_out != p.source_out for p in pairs)
    assert pairs == I.make_pairs(kept, 10, seed=1)
    assert I.make_pairs([("a", "x"), ("b", "x")], 5) == []


def test_top_k():
    ranking = list(range(200))[::-1]
    assert I.top_k(ranking, 1) == [198, 199]
    assert I.top_k(ranking, 0.1) == [199]  # at least one
    assert I.top_k(ranking, 100) is None


def test_svg_has_one_line_per_curve():
    svg = iia_svg([1, 50, 100], {"random": [0, 0.1, 1], "corr": [0.2, 0.5, 1]}, title="t")
    root = ET.fromstring(svg)
    lines = [e for e in root.iter() if e.tag.endswith("polyline")]
    assert len(lines) == 2


def test_iia_whole_residual_is_1_and_unrelated_neuron_is_0(smol):
    task = TASKS["capital_retrieval"]
    n_layers = smol.model().n_layers
    kept = I.filter_fillers(smol, task)
    assert len(kept) >= 10  # SmolLM2 knows most of these capitals
    pairs = I.make_pairs(kept, 6, seed=0)
    last = n_layers - 1
    assert I.iia(smol, task, pairs, [last], n_layers, component="block_output") == 1.0
    # one MLP neuron of an early layer at the country's last token: the base answer stays
    assert I.iia(smol, task, pairs, [2], n_layers, neurons=[7]) == 0.0
