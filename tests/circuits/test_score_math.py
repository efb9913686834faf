"""The circuit scores' arithmetic on hand-made sets and outputs, each expected value worked out
here by hand, and the answer's reader on the forms an agent writes."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest

from interp_harness.evaluator.circuits import faithfulness as fa
from interp_harness.function_store.circuits.answer import ANSWER_FORMAT, parse_circuit

UNIVERSE = ["L0H0", "L0H1", "L0MLP", "L1H0", "L1MLP", "L2MLP"]
TRUTH = ["L0H1", "L1MLP", "L2MLP"]


def test_node_scores_by_hand() -> None:
    # claimed 2 true of 3 and 1 false, plus a padding name outside the universe (dropped)
    s = fa.node_scores(["L0H1", "L1MLP", "L0H0", "L3H7"], TRUTH, UNIVERSE)
    assert (s.tp, s.fp, s.fn) == (2, 1, 1)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 * 2 / (3 + 3))
    exact = fa.node_scores(TRUTH, TRUTH, UNIVERSE)
    assert (exact.precision, exact.recall, exact.f1) == (1.0, 1.0, 1.0)


def test_empty_claim_has_no_precision() -> None:
    s = fa.node_scores([], TRUTH, UNIVERSE)
    assert s.precision is None
    assert (s.recall, s.f1, s.fn) == (0.0, 0.0, 3)


def test_random_f1_is_the_mean_over_every_circuit_of_the_size() -> None:
    # the expectation against an enumeration of all C(6, k) circuits, counted here
    for k in range(len(UNIVERSE) + 1):
        f1s = [2 * len(set(c) & set(TRUTH)) / (k + len(TRUTH)) for c in combinations(UNIVERSE, k)]
        assert fa.random_f1(k, len(TRUTH), len(UNIVERSE)) == pytest.approx(sum(f1s) / len(f1s))
    # k = 2, t = 3, n = 6: E[TP] = 1, F1 = 2 / 5
    assert fa.random_f1(2, 3, 6) == pytest.approx(0.4)


def test_agreement_counts_positions() -> None:
    ref = [["a", "b", "c"], [1.0, 2.0]]
    # 2 of 3, then 1 of 2 (1.0004 is within the tolerance, 2.5 is not): 3 of 5
    assert fa.agreement([["a", "x", "c"], [1.0004, 2.5]], ref) == pytest.approx(3 / 5)
    # a short output misses its missing positions
    assert fa.agreement([["a"], [1.0, 2.0]], ref) == pytest.approx(3 / 5)
    assert not fa.same_output(True, 1)
    assert not fa.same_output(float("nan"), float("nan"))


def test_faithfulness_formulas() -> None:
    # m(C) = 0.9, m(∅) = 0.6: f = 0.3 / 0.4 = 0.75, CMD = 0.25, CPR = 0.9
    f = fa.faithfulness(0.9, 0.6)
    assert (f.cpr, f.f, f.cmd) == (pytest.approx(0.9), pytest.approx(0.75), pytest.approx(0.25))
    # worse than ablating everything: f < 0 and CMD clipped at 1
    worse = fa.faithfulness(0.2, 0.6)
    assert worse.f == pytest.approx(-1.0) and worse.cmd == 1.0
    # the empty circuit itself: f = 0, CMD = 1; the full model: f = 1, CMD = 0
    assert fa.faithfulness(0.6, 0.6).cmd == 1.0
    assert fa.faithfulness(1.0, 0.6).cmd == 0.0
    # ablating everything changes nothing: f is 0/0
    flat = fa.faithfulness(1.0, 1.0)
    assert flat.f is None and flat.cmd is None and flat.cpr == 1.0


def test_closure_counts_wins_and_half_ties() -> None:
    assert fa.closure(0.8, [0.5, 0.8, 0.9, 0.1]) == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert fa.closure(0.3, [0.3]) == 0.5


def test_random_circuits_enumerate_when_few() -> None:
    every = fa.random_circuits(UNIVERSE, 2, 32, seed=0)
    assert len(every) == comb(6, 2) and len(set(every)) == comb(6, 2)
    assert fa.random_circuits(UNIVERSE, 0, 32, seed=0) == [frozenset()]
    drawn = fa.random_circuits(UNIVERSE, 3, 10, seed=1)  # 20 exist: 10 drawn
    assert len(drawn) == 10 and all(len(c) == 3 and c <= set(UNIVERSE) for c in drawn)
    assert drawn == fa.random_circuits(UNIVERSE, 3, 10, seed=1)


def test_parse_circuit_forms() -> None:
    answer = (
        "[CIRCUIT]\n- L0H1: copies the previous token, then\n  more words\n"
        "2) l1 mlp - maps it\nL2.MLP\n[DESCRIPTION]: shifts.\n[CODE]:\n```python\ndef f(x): ...\n```"
    )
    p = parse_circuit(answer)
    assert p.found
    assert p.components == ["L0H1", "L1MLP", "L2MLP"]
    assert p.roles["L0H1"] == "copies the previous token, then more words"
    assert p.roles["L1MLP"] == "maps it"
    # the answer command's one-line array
    one_line = parse_circuit("[CIRCUIT]: L0H0: reads tokens, L1H2: attends back\n[DESCRIPTION]: x")
    assert one_line.roles == {"L0H0": "reads tokens", "L1H2": "attends back"}
    assert parse_circuit("[CIRCUIT]: none\n[DESCRIPTION]: x").components == []
    assert parse_circuit("[CIRCUIT]: none\n[DESCRIPTION]: x").found
    assert not parse_circuit("[DESCRIPTION]: x").found
    # the format the prompt shows reads back as its two example components
    assert parse_circuit(ANSWER_FORMAT).components == ["L0H1", "L1MLP"]
