"""`harness runs show EPISODE` prints why an answer scored its metric's worst value (issue 49
item 2: an answer a metric cannot read is the agent's score, with the reason in
`details["failure"]`), as the episode page does; agent text stays escaped."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from interp_harness.harness.commands._episode import show_episode
from interp_harness.harness.runs import views

REASON = (
    "the description is 126,045 characters (126,045 bytes of UTF-8); simulation reads at most "
    "4,000 bytes"
)


def test_a_scores_failure_reason_is_printed(monkeypatch):
    score = SimpleNamespace(
        metric="simulation_top_random", value=-1.0, status="ok", error=None, error_cause=None,
        error_category=None, details={"failure": REASON, "agent_failure": "too_long"},
    )  # fmt: skip
    hostile = SimpleNamespace(
        metric="code_success", value=0.0, status="ok", error=None, error_cause=None,
        error_category=None, details={"failure": "at x=0.5: ValueError: [bold]boom[/bold]"},
    )  # fmt: skip
    detail = SimpleNamespace(
        id="ep1", run_id="run1", target_id="neuron/t", status="completed", end_reason="answer",
        error_category=None, rounds=1, target_calls=0, inputs=0, prompt_tokens=0,
        completion_tokens=0, scores=[score, hostile], error=None, error_cause=None,
        error_traceback=None,
    )  # fmt: skip
    monkeypatch.setattr(views, "episode_detail", lambda *a, **k: detail)
    out = io.StringIO()
    console = Console(file=out, width=400)
    show_episode(console, store=None, ep=None, as_json=False)  # type: ignore[arg-type]
    text = out.getvalue()
    assert f"simulation_top_random: -1.000 (ok)  ({REASON})" in text, text
    # rich markup in agent text is printed as written, never interpreted
    assert "code_success: 0.000 (ok)  (at x=0.5: ValueError: [bold]boom[/bold])" in text, text
