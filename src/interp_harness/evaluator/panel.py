"""Web panels: what an episode page shows for one benchmark beyond the generic page (a plot, a
unit-test table, token shading). A benchmark record names its panels (`panels`: `module:attr` of
`Panel` objects); the web UI renders them in that order.

A panel reads only stored data (the episode as the API shows it, the details its scorer stored,
the target's ground truth when the viewer may see it) and returns its HTML: a page view never
runs the agent's code or the target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2


@dataclass(frozen=True)
class PanelView:
    """What a panel is given. `episode` is the episode as the API shows it (id, target_id,
    status, scored, scores, calls, ...)."""

    episode: Any
    answer: Any  # the final answer as the scorer parsed it (description / domain / code), or None
    target: Any  # the full target with its ground truth: only when the viewer may see it
    show_truth: bool
    asset_url: str = ""  # where the panel's asset (if any) is served, for a link in its section


@dataclass(frozen=True)
class Rendered:
    html: str  # the panel's section of the episode page
    asset: str | None = None  # the panel alone (e.g. a plot's SVG), served at `asset_url`


@dataclass(frozen=True)
class Panel:
    name: str  # unique within a benchmark; `/ui/episodes/{id}/panels/{name}` serves its asset
    # a section of the episode page (None: nothing to show for this episode)
    render: Callable[[PanelView], Rendered | None] | None = None
    # one target output in the transcript as HTML (None: shown as plain text)
    output: Callable[[str], str | None] | None = None
    asset_name: str = ""  # the asset's file name: also served at `/ui/episodes/{id}/{asset_name}`
    media_type: str = "image/svg+xml"
    # a finished episode's rendering may be cached (drawing it costs)
    cached: bool = False


def html_template(source: str) -> jinja2.Template:
    """A Jinja template escaping as the web UI's own templates do."""
    return jinja2.Environment(autoescape=True).from_string(source)
