"""The score-versus-queries table never cuts an agent's name (issue 40 item 5): a long
`module:Class` stands whole above its bins, wrapped at its dots and colon where it must be, and
each bin's numbers stay on one line, at 100 and at 80 columns."""

from __future__ import annotations

import pytest
from rich.console import Console
from support.evaluator_helpers import summary

from interp_harness.evaluator.api import ScoreResult
from interp_harness.evaluator.report import build_report, render_report

LONG = "my_agents.sweeps.strategies:SweepAgentWithAVeryLongClassName"


@pytest.mark.parametrize("width", [100, 80])
def test_a_long_agent_name_is_wrapped_never_cut(width: int) -> None:
    eps = [
        summary(i, agent, [ScoreResult(metric="code_success", value=float(i % 3 == 0))], inputs=5 + 7 * i)
        for agent in (LONG, "scripted-numeric")
        for i in range(12)
    ]  # fmt: skip
    report = build_report(eps)
    console = Console(width=width, record=True)
    console.print(render_report(report))
    text = console.export_text()
    table = text[text.index("Score versus queries") :]
    lines = [line.rstrip() for line in table.splitlines()]
    assert all(len(line) <= width for line in lines)
    assert "…" not in table
    assert LONG in "".join(line.strip() for line in lines)  # whole, only wrapped
    for q in report.queries:  # each bin's row whole on one line, under its agent
        row = f"{q.bin} {q.episodes} {q.success:.2f}"
        assert any(" ".join(line.split()).startswith(row) for line in lines), (row, table)
    assert len(report.queries) == 6
