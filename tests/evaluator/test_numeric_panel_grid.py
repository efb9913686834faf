"""The function plot reads a stored grid (`agent_grid`, `truth_grid`) that may come from elsewhere
(an imported log, issue 38 item 9): a malformed one is a note on the page, never a 500."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from interp_harness.evaluator.numeric.panel import plot_data
from interp_harness.evaluator.numeric.plot import numeric_svg

ANSWER = SimpleNamespace(code="def f(x):\n    return 2 * x", func_name="f")


def _detail(**details: Any) -> SimpleNamespace:
    nmse = SimpleNamespace(metric="nmse", status="ok", error=None, details=details)
    return SimpleNamespace(scores=[nmse])


@pytest.mark.parametrize(
    ("grid", "note"),
    [
        ({"x": [1.0, 2.0, 3.0], "y": [2.0]}, "has 3 x and 1 y values"),
        ({"x": [{"a": 1}], "y": [{"b": 2}]}, "holds \"{'a': 1}\", not a finite number"),
        ({"x": [1.0], "y": "2"}, "has no list x and list y"),
        ({"x": list(range(5000)), "y": list(range(5000))}, "has 5000 points; at most 4096"),
    ],
    ids=["lengths", "dicts", "not-a-list", "too-long"],
)
def test_a_malformed_stored_grid_is_a_note_not_an_error(grid: dict, note: str) -> None:
    data = plot_data(_detail(agent_grid=grid), ANSWER, None)
    assert "agent" not in data
    assert data["notes"] == [f"agent's code: its stored outputs cannot be drawn (the grid {note})"]
    svg = numeric_svg([], agent=data.get("agent"), truth=data.get("truth"), title="t")
    assert svg.startswith("<svg")
