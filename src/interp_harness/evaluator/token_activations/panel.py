"""The token panel of the token-activation families (neurons, SAE latents): each token of a
target's output shaded by its activation relative to the text's max (the output is
`interp_harness.function_store.token_activations.runner.format_activations`'s)."""

from __future__ import annotations

import re

from interp_harness.sdk import Panel, html_template

_ACT = re.compile(r"(.*?)\((-?\d+\.\d+)\)", re.S)
_ACT_MAX = re.compile(r" \[max (-?\d+\.\d+)\]\Z")

_TOKENS = html_template(
    '<span class="acts" aria-label="token activations">{% for tok, v, shade in acts %}'
    '<span class="act" style="background: rgba(230, 120, 0, {{ shade }})" '
    'title="{{ "%.2f"|format(v) }}">{{ tok }}</span>{% endfor %}</span> '
    '<span class="muted">max {{ "%.2f"|format(acts|map(attribute=1)|max) }}</span>'
)


def activation_tokens(text: str) -> list[tuple[str, float, float]] | None:
    """`The(0.00) cat(2.31) [max 2.31]` as (token, activation, shade in [0, 1] relative to the
    text's max), or None if the text is not of that form."""
    m = _ACT_MAX.search(text or "")
    if m is None:
        return None
    body, top = text[: m.start()], float(m.group(1))
    toks = [(t, float(v)) for t, v in _ACT.findall(body)]
    if not toks or "".join(f"{t}({v})" for t, v in _ACT.findall(body)) != body:
        return None
    return [(t, v, round(max(v, 0.0) / top, 3) if top > 0 else 0.0) for t, v in toks]


def shaded_output(text: str) -> str | None:
    acts = activation_tokens(text)
    return _TOKENS.render(acts=acts) if acts else None


token_panel = Panel(name="tokens", output=shaded_output)
