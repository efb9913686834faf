"""The circuits episode panel: the circuit the answer claims, each component with its role, beside
the true circuit once the viewer may see it (the target's truth file: which claimed components
are true, which true ones were missed, and the role the compiler gave each), then the
experiments the agent ran on components (its ablations and patches), from the stored calls."""

from __future__ import annotations

from typing import Any

from interp_harness.function_store.circuits.answer import parse_circuit
from interp_harness.sdk import Panel, PanelView, Rendered, html_template

# the commands whose calls name components (the other calls only run the model)
EXPERIMENTS = ("ablate", "patch", "activations")
MAX_WORDS_CHARS = 300  # one call's words as shown

_T = html_template(
    """<section aria-labelledby="circuit"><h2 id="circuit">Circuit</h2>
{% if not found %}<p>The answer has no [CIRCUIT] section.</p>{% endif %}
<table class="circuit">
<thead><tr><th scope="col">Component</th><th scope="col">Claimed role</th>
{% if truth %}<th scope="col">In the true circuit</th><th scope="col">True role</th>{% endif %}</tr></thead>
<tbody>{% for r in rows %}<tr><td><code>{{ r.name }}</code></td><td>{{ r.role }}</td>
{% if truth %}<td>{% if r.true %}<span class="ok">yes</span>{% elif r.claimed %}<span class="bad">no</span>{% else %}<span class="bad">missed</span>{% endif %}</td><td>{{ r.true_role }}</td>{% endif %}</tr>{% endfor %}</tbody>
</table>
{% if truth_error %}<p>True circuit: {{ truth_error }}</p>{% endif %}
<h3>Experiments on components ({{ experiments|length }})</h3>
{% if experiments %}<ol class="circuit-experiments">{% for e in experiments %}<li><code>{{ e.words }}</code> ({{ e.outputs }} outputs{% if e.errors %}, {{ e.errors }} errors{% endif %})</li>{% endfor %}</ol>
{% else %}<p>none</p>{% endif %}
</section>"""  # noqa: E501 - the page's markup
)


def true_roles(target: Any) -> dict[str, str]:
    """The true circuit's components and their roles, from the truth file the target names."""
    from interp_harness.function_store.circuits import build

    truth = build.load_truth(target.hidden.spec["truth"])
    return {c: truth.roles.get(c, "") for c in truth.circuit}


def experiments(calls: list[Any]) -> list[dict[str, Any]]:
    """The calls that ablate, patch or read components, as their words."""
    out = []
    for c in calls:
        words = list(getattr(c, "inputs", []) or [])
        if words and str(words[0]) in EXPERIMENTS:
            text = " ".join(str(w) for w in words)
            out.append(
                {
                    "words": text[:MAX_WORDS_CHARS] + ("…" if len(text) > MAX_WORDS_CHARS else ""),
                    "outputs": len(getattr(c, "outputs", []) or []),
                    "errors": getattr(c, "n_errors", 0),
                }
            )
    return out


def render(view: PanelView) -> Rendered:
    claimed = parse_circuit(getattr(view.episode, "final_answer", None) or "")
    truth: dict[str, str] | None = None
    truth_error = None
    if view.show_truth and view.target is not None:
        try:
            truth = true_roles(view.target)
        except Exception as e:  # the build's files are gone: the page still shows the answer
            truth_error = f"unreadable ({type(e).__name__})"
    rows = [
        {
            "name": name,
            "role": role,
            "claimed": True,
            "true": truth is not None and name in truth,
            "true_role": (truth or {}).get(name, ""),
        }
        for name, role in claimed.roles.items()
    ]
    rows += [
        {"name": name, "role": "", "claimed": False, "true": False, "true_role": role}
        for name, role in (truth or {}).items()
        if name not in claimed.roles
    ]
    return Rendered(
        _T.render(
            found=claimed.found,
            rows=rows,
            truth=truth is not None,
            truth_error=truth_error,
            experiments=experiments(list(getattr(view.episode, "calls", []) or [])),
        )
    )


CIRCUIT_PANEL = Panel(name="circuit", render=render)
