"""Chance on a token-activation test set (issue 50 item 1): the vacuous explanation's P/R/F1 and
the Matthews correlation on hand-made cases (values worked out in the comments), and a live test
set whose share of firing items is held at the stated FIRING_SHARE."""

from __future__ import annotations

import math

import pytest

from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations import testset
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.testset import TokenActs


def _counts(rows: list[tuple[bool, bool]]) -> O.Counts:
    return O.counts(O.Observation("u", claimed, fires) for claimed, fires in rows)


# the issue's SmolLM2 neuron: n 117, fired 77, claimed 105, tp 65
ISSUE = O.Counts(n=117, tp=65, claimed=105, fired=77)


def test_the_vacuous_explanation_claims_every_item() -> None:
    # claiming all 117: P = 77/117, R = 1, F1 = 2·77 / (117 + 77) = 154/194
    v = O.prf(O.vacuous(ISSUE))
    assert v.precision == pytest.approx(77 / 117) and v.recall == 1.0
    assert v.f1 == pytest.approx(154 / 194)  # 0.794: above the explanation's own 0.71
    assert O.prf(ISSUE).f1 == pytest.approx(2 * 65 / (105 + 77))
    assert O.firing_share(ISSUE) == pytest.approx(77 / 117)
    assert O.prf(O.vacuous(O.Counts(n=3))).f1 is None  # never fires: recall undefined


def test_mcc_by_hand() -> None:
    # the issue's neuron: fp 40, fn 12, tn 117 − 105 − 12 = 0:
    # (65·0 − 40·12) / √(105 · 12 · 77 · 40) = −480 / √3880800
    assert O.mcc(ISSUE) == pytest.approx(-480 / math.sqrt(105 * 12 * 77 * 40))
    # tp 2, fp 1, fn 1, tn 2: (4 − 1) / √(3·3·3·3) = 1/3
    rows = [(True, True)] * 2 + [(True, False), (False, True)] + [(False, False)] * 2
    assert O.mcc(_counts(rows)) == pytest.approx(1 / 3)
    assert O.mcc(_counts([(True, True), (False, False)])) == 1.0
    assert O.mcc(_counts([(True, False), (False, True)])) == -1.0


def test_mcc_of_a_claim_that_does_not_vary_is_zero_and_of_constant_firing_undefined() -> None:
    assert O.mcc(O.vacuous(ISSUE)) == 0.0  # everything claimed
    assert O.mcc(_counts([(False, True), (False, False)])) == 0.0  # nothing claimed
    assert O.mcc(_counts([(True, True), (False, True)])) is None  # fires on every item
    assert O.mcc(O.Counts()) is None


def test_summary_carries_chance_beside_the_scores() -> None:
    a = [(True, True), (True, False), (False, True), (False, False)]  # mcc 0; vacuous P 1/2
    b = [(True, True), (True, True), (False, True)]  # fires everywhere: mcc undefined; vac P 1
    obs = [O.Observation("a", c, f) for c, f in a] + [O.Observation("b", c, f) for c, f in b]
    s = O.evaluate(obs, n_boot=0).overall
    # pooled: n 7, fired 5, claimed 4, tp 3: fp 1, fn 2, tn 1 → (3 − 2) / √(4·3·5·2)
    assert s.micro_mcc == pytest.approx(1 / math.sqrt(120))
    assert (s.macro_mcc, s.macro_mcc_n) == (0.0, 1)
    assert s.vacuous_micro.precision == pytest.approx(5 / 7) and s.vacuous_micro.recall == 1
    assert s.vacuous_micro.f1 == pytest.approx(10 / 12)
    assert s.vacuous_macro.f1 == pytest.approx((2 / 3 + 1) / 2)


def _acts(*rows: list[tuple[str, float]]) -> list[TokenActs]:
    return [
        TokenActs(" ".join(t for t, _ in r), [t for t, _ in r], [v for _, v in r]) for r in rows
    ]


# position 0 of each text is the attention sink (never drawn); "red" is the claimed word
CORPUS = _acts(
    [("<s>", -5.0), ("red", 1.0), ("a", 0.5), ("b", 0.4), ("c", -0.1), ("d", -0.2)],
    [("<s>", -5.0), ("red", -1.0), ("e", 0.3), ("f", -0.3), ("g", -0.4), ("h", -0.5)],
    [("<s>", -5.0), ("i", 0.2), ("j", -0.6), ("k", -0.7), ("l", -0.8), ("m", -0.9)],
)


def _share(obs: list[O.Observation]) -> float:
    return sum(o.fires for o in obs) / len(obs)


def test_the_live_test_set_holds_the_stated_firing_share() -> None:
    member = LexicalMembership('"red"')
    # without control: Type I red (fires), red (silent); Type II: each text's top unclaimed
    # token, e (0.3) and i (0.2), text 1's top being the claimed red: 3 of 4 fire
    plain = testset.build(CORPUS, member, "u", firing_share=None)
    assert len(plain) == 4 and _share(plain) == 0.75
    # at ½: 3 fire, so 6 items: 2 unclaimed non-firing tokens added (pool: c d f g h j k l m)
    half = testset.build(CORPUS, member, "u")
    assert len(half) == 6 and _share(half) == testset.FIRING_SHARE == 0.5
    assert half[4:] == [O.Observation("u", False, False)] * 2
    assert O.prf(O.vacuous(O.counts(half))).f1 == pytest.approx(2 / 3)
    # the explanation's F1 (tp 1, claimed 2, fired 3: 2/5) ignores the added true negatives;
    # its MCC counts them: tp 1, fp 1, fn 2, tn 0 → −2 / √(2·2·3·1); with tn 2 → 0
    assert O.prf(O.counts(plain)).f1 == O.prf(O.counts(half)).f1 == pytest.approx(2 / 5)
    assert O.mcc(O.counts(plain)) == pytest.approx(-2 / math.sqrt(12))
    assert O.mcc(O.counts(half)) == 0.0


def test_too_few_firing_items_are_topped_up_from_the_pool_and_the_pool_bounds_it() -> None:
    # 1 of 4 fire; at ½ two unclaimed firing items are needed: (½·4 − 1) / ½ = 2
    few = [O.Observation("u", True, f) for f in (True, False, False, False)]
    assert (
        testset.balance(few, {True: 5, False: 0}, 0.5, "u") == [O.Observation("u", False, True)] * 2
    )
    assert len(testset.balance(few, {True: 1, False: 0}, 0.5, "u")) == 1  # what the pool holds
    # 3 of 4 fire, share ¼: 3 / ¼ − 4 = 8 non-firing ones
    many = [O.Observation("u", True, f) for f in (True, True, True, False)]
    assert (
        testset.balance(many, {True: 0, False: 9}, 0.25, "u")
        == [O.Observation("u", False, False)] * 8
    )
    with pytest.raises(ValueError):
        testset.balance(many, {True: 0, False: 9}, 1.0, "u")


def test_carriers_and_the_sink_are_never_drawn() -> None:
    member = LexicalMembership('"zzz"')
    # one corpus text whose tokens all fire except the sink's position: nothing non-firing to add
    corpus = _acts([("<s>", -5.0), ("a", 1.0), ("b", 1.0)])
    carrier = _acts([("x", -1.0), ("zzz", 1.0), ("y", -1.0)])
    obs = testset.build(corpus + carrier, member, "u", pool_texts=1)
    # Type I zzz (fires); Type II: a (1.0) and the carrier's zzz is claimed → 2 items, both fire;
    # the pool has no non-firing token (the sink and the carrier's x, y are not drawn)
    assert obs == [O.Observation("u", True, True), O.Observation("u", False, True)]
