"""The unit-test table of an episode page, and the panel of judge-scored targets: each triplet,
the correct item and the judge's pick, as the `unit_test` score stored them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from interp_harness.evaluator.panel import Panel, PanelView, Rendered, html_template

_TABLE = html_template(
    """<section aria-labelledby="unit-tests">
<h2 id="unit-tests">Unit tests</h2>
<table class="unit-tests">
  <thead><tr><th scope="col">Input</th><th scope="col">Expected</th><th scope="col">{{ output_header }}</th><th scope="col">Match</th></tr></thead>
  <tbody>{% for u in rows %}<tr><td><code>{{ u.input }}</code></td><td><code>{{ u.expected }}</code></td><td><code>{{ u.output }}</code></td><td>{% if u.match is none %}-{% elif u.match %}<span class="ok">yes</span>{% else %}<span class="bad">no</span>{% endif %}</td></tr>{% endfor %}</tbody>
</table>
</section>"""  # noqa: E501 - the page's markup, kept as one line per row
)


def unit_test_table(rows: list[dict[str, Any]], output_header: str) -> Rendered:
    """Rows of input, expected, output and match (True / False / None: not judged) under a
    header naming the output column (the caller's literal text, written as is)."""
    return Rendered(_TABLE.render(rows=rows, output_header=Markup(output_header)))


def judge_rows(view: PanelView) -> list[dict[str, Any]]:
    verdicts = next(
        (s.details.get("verdicts") for s in view.episode.scores if s.metric == "unit_test"), None
    )
    rows = []
    for k, u in enumerate(view.target.unit_tests):
        v = (verdicts or [])[k] if verdicts and k < len(verdicts) else {}
        rows.append(
            {
                "input": " | ".join(u.inputs),
                "expected": f"item {u.correct}",
                "output": f"judge picked {v.get('strict_answer')}" if v else "-",
                "match": v.get("find_compat") if v else None,
            }
        )
    return rows


def table_panel(rows: Callable[[PanelView], list[dict[str, Any]]], output_header: str) -> Panel:
    """A unit-test table panel; it shows ground truth (the expected outputs), so only when the
    viewer may see it."""

    def render(view: PanelView) -> Rendered | None:
        return None if view.target is None else unit_test_table(rows(view), output_header)

    return Panel(name="unit-tests", render=render)


judge_test_panel = table_panel(judge_rows, "Judge")
