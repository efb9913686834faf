"""The toy episode panel: how many calls the agent made, and (to viewers allowed to see it) the mood."""

from __future__ import annotations

from interp_harness.sdk import Panel, PanelView, Rendered, html_template

_T = html_template(
    '<section class="toy-panel"><h2>Toy mood</h2><p>calls: {{ n }}</p>'
    "{% if mood %}<p>mood: {{ mood }}</p>{% endif %}</section>"
)


def render(view: PanelView) -> Rendered:
    ep = view.episode
    mood = view.target.hidden.spec["mood"] if view.show_truth and view.target else None
    return Rendered(html=_T.render(n=len(getattr(ep, "calls", []) or []), mood=mood))


MOOD_PANEL = Panel(name="mood", render=render)
