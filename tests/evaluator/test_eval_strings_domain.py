import pytest
from support.evaluator_helpers import string_target

from interp_harness.evaluator.domain import iou, parse_intervals, score_domain, true_interval
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.scorer import Item
from interp_harness.evaluator.strings.scorer import score_strings_batch
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

PAIRS = [("abc", "ABC"), ("it's", "IT'S"), ("x", "X"), ("Hello", "HELLO")]


def test_default_and_find_compat_modes_in_sandbox():
    t = string_target(PAIRS)
    ans = parse_answer(
        "[DESCRIPTION]: upper\n[CODE]: ```python\ndef f(s):\n    return s.upper()\n```"
    )
    (res,) = score_strings_batch([Item(t, ans)], runner=run_in_sandbox)
    by = {r.metric: r for r in res}
    assert by["string_exact"].value == 1.0  # input passed as data: the quote is fine
    # FIND pastes 'it's' between quotes -> SyntaxError on item 2: [1, 0] -> 1/2
    assert by["string_exact_find"].value == pytest.approx(0.5)
    assert by["string_exact_find"].details["partial_scores"] == [1, 0]


def test_exception_item_and_non_str():
    t = string_target(PAIRS)
    code = "def f(s):\n    if s == 'x':\n        raise ValueError('no')\n    if s == 'Hello':\n        return 5\n    return s.upper()"
    (res,) = score_strings_batch(
        [Item(t, parse_answer(f"[CODE]: ```python\n{code}\n```"))], runner=run_in_sandbox
    )
    by = {r.metric: r for r in res}
    assert by["string_exact"].value == pytest.approx(
        2 / 4
    )  # abc, it's pass; x raises; 5 != 'HELLO'
    assert by["string_exact_find"].value == pytest.approx(
        1 / 2
    )  # abc ok, it's breaks the paste, stop


def test_partial_list_three_then_error():
    pairs = [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D"), ("e", "E")]
    code = "def g(s):\n    if s == 'd':\n        raise KeyError(s)\n    return s.upper()"
    (res,) = score_strings_batch(
        [Item(string_target(pairs), parse_answer(f"[CODE]: ```\n{code}\n```"))],
        runner=run_in_sandbox,
    )
    by = {r.metric: r for r in res}
    assert by["string_exact_find"].value == pytest.approx(3 / 4)  # 3 passes then an error
    assert by["string_exact"].value == pytest.approx(4 / 5)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Noise between 92.3 and 103.4.", [(92.3, 103.4)]),
        ("For x > 40 the output is random", [(40.0, 128.0)]),
        ("values less than -20.5 are noise", [(-128.0, -20.5)]),
        ("The domain is [-128, 128]. There is no unexpected interval.", []),
        ("odd in [10, 20] and (30, 35)", [(10.0, 20.0), (30.0, 35.0)]),
    ],
)
def test_parse_intervals(text, expected):
    assert parse_intervals(text) == expected


def test_true_interval_and_iou():
    assert true_interval({"type": "interval_inside", "interval": [92.3, 140.0]}) == (92.3, 128.0)
    assert true_interval({"type": "interval_smaller", "interval": [-50.0]}) == (-128.0, -50.0)
    assert true_interval({"type": "interval_larger", "interval": [60.0, None]}) == (60.0, 128.0)
    # [10,20] vs [15,25]: intersection 5, union 15
    assert iou([(10.0, 20.0)], (15.0, 25.0)) == pytest.approx(1 / 3)


def test_domain_outcomes():
    cor = {"type": "interval_inside", "interval": [10.0, 20.0]}
    assert score_domain("between 15 and 25", cor, {}).details["outcome"] == "found"
    assert score_domain("nothing unusual", cor, {}).details["outcome"] == "missed"
    assert score_domain("between 50 and 60", cor, {}).details["outcome"] == "false_alarm"
    clean = score_domain("between 50 and 60", None, {})
    assert clean.value is None and clean.details["outcome"] == "false_alarm"
    assert score_domain("no interval", None, {}).details["outcome"] == "correct_reject"


@pytest.mark.parametrize(
    "text",
    ["1" * 20_000, "-" + "9" * 20_000 + " to", "x > " + "5" * 20_000],
    ids=["digits", "signed-run", "one-sided"],
)
def test_parse_intervals_has_no_quadratic_stall(text):
    # A stall guard, not a speed test: the quadratic regex took ~38 s of CPU on 20,000 digits.
    # CPU time of this process, so a busy machine does not fail it.
    import time

    t = time.process_time()
    parse_intervals(text)
    assert time.process_time() - t < 2.0
