"""The numeric episode panel: the function plot, drawn from what scoring stored (never by running
code: a page view must cost no sandbox run, issue 27)."""

from __future__ import annotations

from typing import Any

from interp_harness.evaluator.domain import true_interval
from interp_harness.evaluator.numeric.grid import GridInvalid, check_grid
from interp_harness.evaluator.numeric.plot import numeric_svg, sampled_points
from interp_harness.sdk import Panel, PanelView, Rendered, html_template

_SECTION = html_template(
    """<section aria-labelledby="plot">
<h2 id="plot">Function plot</h2>
<figure class="plot" id="numeric-plot" data-points="{{ points }}">
  {{ svg|safe }}
  <figcaption>{{ points }} points sampled by the agent; the agent's code{% if show_truth %}, the ground truth and the corrupted interval (if any){% endif %} on FIND's 256-point scoring grid. <a href="{{ asset_url }}">SVG</a></figcaption>
</figure>
{% for n in notes %}<p class="note">{{ n }}</p>{% endfor %}
</section>"""  # noqa: E501 - the page's markup
)


def plot_data(detail: Any, answer: Any, target: Any) -> dict[str, Any]:
    """What scoring computed on FIND's 256-point grid, read from the `nmse` score's details (the
    agent code's outputs and, with `target` (the viewer may see ground truth), the ground truth)
    and the corrupted interval; notes say what cannot be drawn and why. Never runs code: a page
    view must cost no sandbox run (issue 27)."""
    out: dict[str, Any] = {"notes": []}
    nmse = next((s for s in detail.scores if s.metric == "nmse"), None)
    details = nmse.details if nmse is not None else {}
    grid = details.get("agent_grid")
    if answer is None:
        pass
    elif not (answer.code.strip() and answer.func_name):
        out["notes"].append("the final answer has no function to plot")
    elif isinstance(grid, dict) and grid.get("x"):
        try:  # stored data, maybe imported from elsewhere: a bad line is a note, never a 500
            out["agent"] = check_grid(grid)
        except GridInvalid as e:
            out["notes"].append(f"agent's code: its stored outputs cannot be drawn (the grid {e})")
    elif nmse is None:
        out["notes"].append("the episode has no code score: nothing computed to plot")
    elif nmse.status == "error":
        out["notes"].append(f"agent's code: not scored ({nmse.error})")
    elif grid is None:
        out["notes"].append("agent's code: its outputs were not stored (scored before they were)")
    else:
        out["notes"].append(f"agent's code: {details.get('failure') or 'no numeric output'}")
    if target is not None:
        truth = details.get("truth_grid")
        if isinstance(truth, dict) and truth.get("x"):
            try:
                out["truth"] = check_grid(truth)
            except GridInvalid as e:
                out["notes"].append(f"ground truth: cannot be drawn (the stored grid {e})")
        elif nmse is not None:
            failure = str(details.get("failure") or "")
            why = nmse.error or (failure if failure.startswith("ground truth") else "")
            out["notes"].append(f"ground truth: {why or 'not stored for this episode'}")
        out["corrupted"] = true_interval(target.hidden.corruption)
    return out


def render_plot(view: PanelView) -> Rendered:
    """The plot's section and its SVG. A running episode shows only the points sampled so far."""
    detail = view.episode
    points = sampled_points(detail.calls)
    data: dict[str, Any] = {"notes": []}
    if detail.status not in ("queued", "running"):
        data = plot_data(detail, view.answer, view.target)
    svg = numeric_svg(
        points,
        agent=data.get("agent"),
        truth=data.get("truth"),
        corrupted=data.get("corrupted"),
        title=detail.target_id,
    )
    html = _SECTION.render(
        points=len(points),
        svg=svg,
        show_truth=view.show_truth,
        asset_url=view.asset_url,
        notes=data["notes"],
    )
    return Rendered(html, asset=svg)


plot_panel = Panel(name="plot", render=render_plot, asset_name="plot.svg", cached=True)
