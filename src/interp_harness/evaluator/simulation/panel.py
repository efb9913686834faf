"""The simulation panel of an episode page: for each top-and-random text, every token with its
true activation (0-10) and the simulator's prediction, as the `simulation_top_random` score
stored them (`details.per_text`), under the simulator's name and the score. It reads the stored
score only."""

from __future__ import annotations

from typing import Any

from interp_harness.evaluator.panel import Panel, PanelView, Rendered, html_template
from interp_harness.evaluator.simulation.scoring import METRICS

_T = html_template(
    """<section class="simulation-panel" aria-labelledby="simulation">
<h2 id="simulation">Simulated vs true activations</h2>
<p>simulator: <strong>{{ simulator }}</strong>; correlation {{ score }} over {{ tokens }} tokens of {{ texts }} texts ({{ sample }}); scale 0-10</p>
{% for t in rows %}<table class="simulation" aria-label="text {{ loop.index }} ({{ t.sample }})">
<tr><th scope="row">{{ t.sample }}</th>{% for tok in t.tokens %}<td><code>{{ tok }}</code></td>{% endfor %}</tr>
<tr><th scope="row">true</th>{% for v in t.true %}<td class="true" style="background: rgba(230, 120, 0, {{ (v or 0) / 10 }})">{{ "-" if v is none else v }}</td>{% endfor %}</tr>
<tr><th scope="row">simulated</th>{% for v in t.simulated %}<td class="simulated" style="background: rgba(40, 110, 220, {{ [[v, 0]|max, 10]|min / 10 }})">{{ "%.1f"|format(v) }}</td>{% endfor %}</tr>
</table>{% endfor %}
</section>"""  # noqa: E501 - the page's markup, kept as one line per row
)


def _score(view: PanelView) -> Any:
    return next((s for s in view.episode.scores if s.metric == METRICS[0]), None)


def render(view: PanelView) -> Rendered | None:
    s = _score(view)
    rows = (s.details.get("per_text") if s is not None else None) or []
    if not rows:
        return None  # not scored, or a simulator failure (shown with the scores)
    score = "-" if s.value is None else f"{s.value:.2f}"
    return Rendered(
        html=_T.render(
            simulator=s.details.get("simulator", "?"),
            score=score,
            tokens=s.details.get("tokens", 0),
            texts=s.details.get("texts", len(rows)),
            sample=s.details.get("sample", ""),
            rows=rows,
        )
    )


simulation_panel = Panel(name="simulation", render=render)
