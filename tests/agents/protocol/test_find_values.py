"""`True` and numpy `array(...)` outputs, read as FIND itself treats them (interp_harness.agents.protocol.values).

FIND's numeric functions print their value with Python `str()` (`outputs += f'({arg}, {out}) '` in
each `function_code.py` of the FIND repository), so a comparison prints `True` and a numpy 0-d
array prints its bare value (`str(np.array(3.0))` is `3.0`; `np.where` on a scalar returns one).
FIND's numeric scoring (its `mse_indicator.py`) calls the ground truth in-process and computes
`abs(g)` and `|g - t|^2` on the returned object itself: a bool counts as the integer 0 or 1 and an
array as the value it holds. The shared reader gives exactly those numbers, for the evaluator
(ground-truth outputs) and for the agents (observations) alike; before the protocol was one
module, the agents read `True` as no number and the evaluator refused `array(3.)`.
"""

from __future__ import annotations

import numpy as np
import pytest

from interp_harness.agents.protocol import format_value, numeric_points, parse_number, parse_value
from interp_harness.agents.protocol.conversation import Observation
from interp_harness.evaluator.numeric import (
    grid_inputs,
    ground_truth_from_outputs,
    parse_find_value,
)
from interp_harness.function_store.models import CallOutput


def find_scoring_value(g: object) -> complex:
    """The number FIND's scoring computes with for a returned object `g`: the value of
    `|g - 0|` with its sign, i.e. what `g - t` uses (Python/numpy arithmetic)."""
    return complex(g - 0)  # type: ignore[operator]


@pytest.mark.parametrize(
    "value", [True, False, np.True_, np.False_, np.array(3.0), np.array(-2.5), np.array(0)]
)
def test_printed_value_reads_as_find_computes_with_it(value: object) -> None:
    printed = format_value(value)  # what FIND's CLI shows the agent
    expected = find_scoring_value(value)
    assert parse_number(printed) == expected  # the evaluator's reader
    assert parse_find_value(printed) == expected  # the same function under its evaluator name
    assert parse_value(printed) == expected.real  # the agents' reader


def test_true_prints_as_true_and_reads_as_one() -> None:
    assert format_value(True) == "True" and format_value(np.True_) == "True"
    assert parse_number("True") == 1 and parse_number("False") == 0
    assert parse_value("True") == 1.0 and parse_value("False") == 0.0


def test_array_forms_read_as_their_value() -> None:
    """FIND never prints `array(...)` (it uses `str()`), but a runner or an agent that shows a
    numpy repr gets the value the array holds, as FIND's arithmetic would use it."""
    assert format_value(np.array(3.0)) == "3.0"
    for printed in ("array(3.)", "array(3.0)", "array([3.])", "[3.]", "array(3., dtype=float32)"):
        assert parse_number(printed) == 3
        assert parse_value(printed) == 3.0
    assert parse_number("array(-20.5+1j)") == complex(-20.5, 1)


def test_both_sides_agree_on_a_boolean_ground_truth() -> None:
    """A target printing `True`/`False` (e.g. `x > 0`): the evaluator scores against 1/0 and the
    scripted agents fit the same 1/0 points."""
    outputs = [CallOutput(input=x, output=str(float(x) > 0)) for x in grid_inputs()]
    gt = ground_truth_from_outputs(outputs)
    assert gt.error is None and gt.values == [complex(float(x) > 0) for x in grid_inputs()]
    xs, ys, _ = numeric_points([Observation(o.input, o.output or "") for o in outputs])
    assert ys == [v.real for v in gt.values] and xs == gt.xs
