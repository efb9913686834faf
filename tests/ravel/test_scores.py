"""Cause / Isolate / Disentangle on hand-computed cases."""

from __future__ import annotations

import pytest

from interp_harness.evaluator.ravel.scores import ExampleOutcome, disentangle, sequence_match


def o(attr: str, template: str, gen: list[int], label: list[int], inv: list[int]) -> ExampleOutcome:
    return ExampleOutcome(
        attribute=attr, template=template, generated_ids=gen, label_ids=label, inv_label_ids=inv
    )


def test_sequence_match_pads_short_labels():
    assert sequence_match([5, 6, 7], [5], 3)  # label positions past its end count as matches
    assert sequence_match([5, 6, 7], [5, 6], 2)
    assert not sequence_match([5, 9, 7], [5, 6], 2)
    assert sequence_match([5, 9], [5, 6], 1)  # only the first N positions


def test_hand_computed_scores():
    # target Country: two templates. c1: 3 pairs, 2 caused -> 0.67 (rounded as RAVEL does);
    # c2: 1 pair, caused -> 1.0. Cause = (0.67 + 1.0) / 2 = 0.835.
    # Continent (one template, 2 pairs, 1 kept its label) -> 0.5;
    # Language (two templates: 1/1 and 0/1) -> mean(1.0, 0.0) = 0.5. Isolate = (0.5 + 0.5) / 2.
    outs = [
        o("Country", "c1", [1], [9], [1]),
        o("Country", "c1", [2], [9], [2]),
        o("Country", "c1", [9], [9], [3]),
        o("Country", "c2", [4], [8], [4]),
        o("Continent", "k1", [7], [7], [6]),
        o("Continent", "k1", [6], [7], [6]),
        o("Language", "l1", [5], [5], [4]),
        o("Language", "l2", [4], [5], [4]),
    ]
    s = disentangle(outs, "Country")
    assert s.cause == pytest.approx(0.835)
    assert s.isolate == pytest.approx(0.5)
    assert s.disentangle == pytest.approx(0.6675)
    assert (s.n_cause, s.n_isolate) == (4, 4)
    # the same outcomes scored for Continent: cause 0.5; isolate = mean(Country 0.33/0.0 -> 0.165,
    # Language 0.5) = 0.3325
    c = disentangle(outs, "Continent")
    assert c.cause == pytest.approx(0.5)
    assert c.isolate == pytest.approx((0.165 + 0.5) / 2)


def test_attributes_weigh_equally_not_by_example_count():
    outs = [o("A", "a", [1], [0], [1])]
    outs += [o("B", "b", [2], [2], [3])] * 9  # 9 isolated pairs of B
    outs += [o("C", "c", [3], [2], [3])]  # 1 non-isolated pair of C
    assert disentangle(outs, "A").isolate == pytest.approx(0.5)


def test_missing_target_or_others_is_an_error():
    with pytest.raises(ValueError, match="target attribute"):
        disentangle([o("B", "b", [1], [1], [2])], "A")
    with pytest.raises(ValueError, match="other than"):
        disentangle([o("A", "a", [1], [1], [2])], "A")
