"""`harness neurons ...`: the neuron-explanation benchmark (Huang et al. 2023) from the command
line: observational P/R/F1 of the released explanations, probes, IIA / IIA@K."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

console = Console()
neurons_app = typer.Typer(
    no_args_is_help=True, help="Neuron explanations (Huang et al. 2023): P/R/F1, probes, IIA."
)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _ci(iv) -> str:
    return "" if iv is None else f"[{iv.low:.3f}, {iv.high:.3f}]"


@neurons_app.command("observational")
def observational(
    source: str = typer.Option(
        "activations",
        help="activations: fires ⇔ max shipped activation over the span > threshold (the "
        "paper's rule); labels: the shipped TP/FP/FN/TN labels as they are",
    ),
    threshold: float = typer.Option(0.0, help="τ: the neuron is on iff a(q) > τ"),
    boot: int = typer.Option(1000, min=0, help="bootstrap resamples of neurons (0: none)"),
    seed: int = typer.Option(0, help="bootstrap seed"),
    per_layer: bool = typer.Option(True, help="print the per-layer breakdown"),
    json_out: Path | None = typer.Option(None, "--json", help="also write the full report here"),
) -> None:
    """P/R/F1 of the 255 released GPT-4 explanations from the released file alone."""
    from evaluator.neurons import observational as obs
    from evaluator.neurons import released
    from function_store.datasets import DataUnavailable
    from function_store.neurons import data

    if source not in ("activations", "labels"):
        raise typer.BadParameter("activations or labels", param_hint="--source")
    try:
        records = data.load()
    except DataUnavailable as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    flagged = sum(it.mismatched for r in records for it in r.items)
    with console.status("scoring and bootstrapping"):
        rep = obs.evaluate(
            released.observations(records, source, threshold),
            n_boot=boot,
            seed=seed,  # type: ignore[arg-type]
        )
    o = rep.overall
    console.print(
        f"neuron-explanations: {o.neurons} neurons, {o.items} items "
        f"({flagged} with token/activation count mismatch, kept), firing from {source}, τ={threshold:g}"
    )
    t = Table("", "precision", "recall", "F1", title="GPT-4 explanations, single neuron, no probe")
    t.add_row("paper (300 expl.)", *(f"{released.PAPER[m]:.2f}" for m in obs.METRICS))
    for name, v, ci in (("micro", o.micro, o.micro_ci), ("macro", o.macro, o.macro_ci)):
        t.add_row(name, *(_fmt(getattr(v, m)) for m in obs.METRICS))
        t.add_row(f"  {name} 95% CI", *(_ci(ci.get(m)) for m in obs.METRICS))
    t.add_row("median per neuron", "", "", _fmt(o.median_f1))
    console.print(t)
    if per_layer:
        lt = Table("layer", "neurons", "items", "micro P", "micro R", "micro F1", "macro F1")
        for g, s in rep.per_group.items():
            lt.add_row(
                g,
                str(s.neurons),
                str(s.items),
                _fmt(s.micro.precision),
                _fmt(s.micro.recall),
                _fmt(s.micro.f1),
                _fmt(s.macro.f1),
            )
        console.print(lt)
    if json_out:
        json_out.write_text(json.dumps(rep.model_dump(), indent=1))
        console.print(f"report written to {json_out}")


def register(app: typer.Typer) -> None:
    app.add_typer(neurons_app, name="neurons")
