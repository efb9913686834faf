"""The simulation panel renders what the stored `simulation_top_random` score holds: each text's
tokens with their true (0-10) and simulated activations, the simulator's name and the score,
escaped; nothing when the score is missing or an error."""

from __future__ import annotations

from types import SimpleNamespace

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.panel import PanelView
from interp_harness.evaluator.simulation.panel import simulation_panel

PER_TEXT = [
    {"tokens": ["The", " <b>cat"], "true": [0, 10], "simulated": [0.25, 7.5], "sample": "top"},
    {"tokens": ["A", " dog"], "true": [None, 0], "simulated": [0.0, 1.0], "sample": "random"},
]


def _view(*scores: ScoreResult) -> PanelView:
    return PanelView(SimpleNamespace(scores=list(scores)), None, None, False)


def test_tokens_true_and_simulated_per_text() -> None:
    details = {"simulator": "lexical", "texts": 2, "tokens": 3, "sample": "5 top + 5 random"}
    s = ScoreResult(
        metric="simulation_top_random", value=0.8125, details=details | {"per_text": PER_TEXT}
    )
    html = simulation_panel.render(_view(s)).html  # type: ignore[union-attr]
    assert "simulator: <strong>lexical</strong>; correlation 0.81 over 3 tokens of 2 texts" in html
    assert "&lt;b&gt;cat" in html and "<b>cat" not in html  # tokens are escaped
    assert html.count('<table class="simulation"') == 2
    # the true row: 0 and 10 shaded 0 and 1; the unknown shown as "-"; simulated with 1 decimal
    assert 'class="true" style="background: rgba(230, 120, 0, 1.0)">10<' in html
    assert 'class="true" style="background: rgba(230, 120, 0, 0.0)">-<' in html
    assert 'class="simulated" style="background: rgba(40, 110, 220, 0.75)">7.5<' in html


def test_nothing_without_a_stored_simulation() -> None:
    assert simulation_panel.render(_view()) is None  # type: ignore[misc]
    failed = ScoreResult(
        metric="simulation_top_random", status="error", error_category="judge", error="down"
    )
    assert simulation_panel.render(_view(failed)) is None  # type: ignore[misc]
