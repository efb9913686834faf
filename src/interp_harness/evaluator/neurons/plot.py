"""A dependency-free SVG line plot of IIA against K (% of a layer's neurons intervened on)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def iia_svg(ks: Sequence[float], curves: dict[str, Sequence[float]], title: str = "") -> str:
    w, h, left, right, top, bottom = 640, 400, 60, 220, 40, 50
    pw, ph = w - left - right, h - top - bottom
    kmax = max(ks) or 1

    def x(k: float) -> float:
        return left + pw * k / kmax

    def y(v: float) -> float:
        return top + ph * (1 - v)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>',
        f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">K (% of the layer\'s neurons)</text>',
        f'<text x="15" y="{top + ph / 2}" transform="rotate(-90 15 {top + ph / 2})" text-anchor="middle">IIA</text>',
    ]
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end">{v:g}</text>')
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(v)}" y2="{y(v)}" stroke="#ddd"/>')
    for k in ks:
        out.append(f'<text x="{x(k)}" y="{top + ph + 16}" text-anchor="middle">{k:g}</text>')
    for i, (name, vals) in enumerate(curves.items()):
        c = COLORS[i % len(COLORS)]
        pts = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in zip(ks, vals, strict=True))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>')
        for k, v in zip(ks, vals, strict=True):
            out.append(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{c}"/>')
        ly = top + 14 + 18 * i
        out.append(
            f'<line x1="{left + pw + 12}" x2="{left + pw + 32}" y1="{ly - 4}" y2="{ly - 4}" stroke="{c}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
