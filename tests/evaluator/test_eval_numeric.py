import math

import pytest
from support.evaluator_helpers import GRID, nmse_by_hand, numeric_target

from interp_harness.evaluator import numeric as num
from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeResult
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.sandbox.code_runner import run_in_sandbox


def test_grid_is_256_half_integers():
    assert len(num.GRID) == 256 and num.GRID[0] == -127.5 and num.GRID[-1] == 127.5
    assert num.grid_inputs()[:2] == ["-127.5", "-126.5"]


@pytest.mark.parametrize(
    "text,value",
    [
        ("-4.908549848419406", -4.908549848419406),
        ("(7.599999999999999-20.8j)", complex(7.599999999999999, -20.8)),
        ("0", 0),
        ("[2.5]", 2.5),
    ],
)
def test_parse_find_value(text, value):
    assert num.parse_find_value(text) == value


def test_parse_find_value_special():
    assert num.parse_find_value("None") is None
    assert math.isnan(num.parse_find_value("nan").real)
    assert num.parse_find_value("-inf").real == -math.inf
    with pytest.raises(num.UnparseableValue):
        num.parse_find_value("hello")


def test_nmse_formula_by_hand():
    # g = (1, 2), t = (1, 4): sum|g-t|^2 = 4, sum|g|^2 = 5
    assert num.nmse([1, 2], [1, 4]) == pytest.approx(0.8)
    assert num.nmse([1j, 0], [0, 0]) == pytest.approx(1.0)
    assert math.isnan(num.nmse([0, 0], [0, 0]))


def test_ground_truth_skips_nan_inf_and_fails_on_exception():
    outs = [CallOutput(input=str(x), output="nan" if x < 0 else "1.0") for x in GRID]
    gt = num.ground_truth_from_outputs(outs)
    assert gt.skipped == 128 and len(gt.xs) == 128 and gt.xs[0] == 0.5
    outs[200] = CallOutput(input="72.5", output="None")
    assert num.ground_truth_from_outputs(outs).exception_at == 72.5


def _res(values):
    return CodeResult(id="0", status="ok", results=[{"v": [v, 0.0]} for v in values])


def test_score_from_results_success_failure_and_gt_exception():
    gt = num.GroundTruth(xs=[1.0, 2.0], values=[1, 2], skipped=0)
    ok = num.score_from_agent_results(gt, _res([1, 2.2]))
    assert ok[1].value == 1.0 and ok[0].value == pytest.approx(0.04 / 5)
    bad = num.score_from_agent_results(gt, _res([1, 4]))
    assert bad[1].value == 0.0 and bad[0].value == pytest.approx(0.8)
    err = CodeResult(id="0", status="ok", results=[{"v": [1, 0]}, {"err": "ZeroDivisionError"}])
    failed = num.score_from_agent_results(gt, err)
    assert failed[1].value == 0.0 and "x=2.0" in failed[1].details["failure"]
    nan = num.score_from_agent_results(gt, _res([math.nan, 2]))
    assert nan[1].value == 0.0
    exc = num.GroundTruth([], [], 0, exception_at=3.5)
    assert num.score_from_agent_results(exc, _res([]))[1].value == 0.0  # FIND: 0
    as_error = num.score_from_agent_results(exc, _res([]), gt_exception="error")
    assert as_error[1].status == "error" and as_error[1].error_category == "target"
    infra = num.score_from_agent_results(
        gt, CodeResult(id="0", status="infrastructure", reason="boom")
    )
    assert infra[1].status == "error" and infra[1].error_category == "sandbox"


def _answer(code: str):
    return parse_answer(f"[DESCRIPTION]: d\n[DOMAIN]: none\n[CODE]: ```python\n{code}\n```")


def test_batch_in_bwrap_sandbox_end_to_end():
    lin = numeric_target("lin", lambda x: 3.0 * x - 2.0)
    logt = numeric_target("log", lambda x: math.log(x) if x > 0 else math.nan)
    items = [
        Item(lin, _answer("def f(x):\n    return 3*x - 2")),
        Item(lin, _answer("import numpy as np\ndef f(x):\n    return np.float64(3*x)")),
        Item(
            logt, _answer("import math\ndef f(x):\n    return math.log(x)")
        ),  # GT NaN points skipped
        Item(lin, _answer("def f(x):\n    return None")),
        Item(lin, parse_answer("[DESCRIPTION]: no code at all")),
    ]
    out = score_numeric_batch(items, settings=EvalSettings(), runner=run_in_sandbox)
    by = [{r.metric: r for r in rs} for rs in out]
    assert by[0]["code_success"].value == 1.0 and by[0]["nmse"].value == 0.0
    expected = nmse_by_hand(lambda x: 3 * x - 2, lambda x: 3 * x)
    assert by[1]["nmse"].value == pytest.approx(expected)
    assert by[1]["code_success"].value == (1.0 if expected < 0.1 else 0.0)
    assert by[2]["code_success"].value == 1.0 and by[2]["nmse"].details["gt_skipped"] == 128
    assert (
        by[3]["code_success"].value == 0.0
        and "non-numeric" in by[3]["code_success"].details["failure"]
    )
    assert by[4]["code_success"].value == 0.0 and by[4]["code_success"].status == "ok"
    assert by[0]["code_success"].details["guard"] == "seccomp"


def test_agent_function_named_function_is_scored_on_what_it_computes():
    # Issue 20 item 8: in FIND an agent function named `function` replaced the ground truth's
    # module and always scored 1; here the ground truth comes from the target, so a wrong
    # `function` fails and a right one succeeds.
    lin = numeric_target("lin_named_function", lambda x: 3.0 * x - 2.0)
    items = [
        Item(lin, _answer("def function(x):\n    return -x * x")),
        Item(lin, _answer("def function(x):\n    return 3*x - 2")),
    ]
    wrong, right = (
        {r.metric: r for r in rs}
        for rs in score_numeric_batch(items, settings=EvalSettings(), runner=run_in_sandbox)
    )
    assert wrong["code_success"].value == 0.0 and wrong["nmse"].value > 0.1
    assert right["code_success"].value == 1.0 and right["nmse"].value == 0.0
