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


def _client(url: str | None):
    import os

    from function_store.intervention.client import InterventionClient

    url = url or os.environ.get("HARNESS_INTERVENTION_URL")
    if not url:
        console.print(
            "[red]no intervention service: pass --url or set HARNESS_INTERVENTION_URL "
            "(`harness intervention serve --model smollm2`)[/red]"
        )
        raise typer.Exit(2)
    return InterventionClient(url)


@neurons_app.command("probe")
def probe(
    url: str | None = typer.Option(
        None, help="intervention service (default: $HARNESS_INTERVENTION_URL)"
    ),
    explanations: int = typer.Option(
        20, min=1, help="released explanations to use (seeded sample)"
    ),
    folds: int = typer.Option(2, min=2, help="cross-validation folds per explanation"),
    seed: int = typer.Option(0, help="sample, fold and random-selection seed"),
) -> None:
    """F1 of a linear probe over N ∈ {1, 2, 4, 16} neurons, the paper's table layout.

    Items, labels and explanations are the released ones; activations are read live from the
    model the service serves (GPT-2 XL: the paper's setting; another model: the layer at the same
    relative depth, a smoke test). Rows: selection by explanation similarity (only where the
    candidate neurons have explanations: GPT-2 XL), random neurons of the layer, and activation
    correlation on the training fold."""
    import random as _random

    from rich.progress import track

    from evaluator.neurons import live
    from evaluator.neurons import observational as obs
    from evaluator.neurons import probe as P
    from function_store.neurons import data

    records = data.load()
    picked = _random.Random(seed).sample(records, min(explanations, len(records)))
    with _client(url) as client:
        info = client.model()
        is_xl = info.n_layers == live.GPT2_XL_LAYERS and info.mlp_width == 6400
        table: dict[str, dict[str, list[float]]] = {}
        skipped = 0
        for rec in track(picked, description="reading activations", console=console):
            layer = rec.layer if is_xl else live.mapped_layer(rec.layer, info.n_layers)
            m = live.read_items(client, rec, layer)
            skipped += m.skipped
            if len(set(m.y.tolist())) < 2:
                continue
            selectors: list = [P.RandomSelector(), P.CorrelationSelector()]
            if is_xl:  # columns = every neuron of the layer; explanations for the released ones
                expl = {r.index: r.explanation for r in records if r.layer == rec.layer}
                cols = [expl.get(i, "") for i in range(info.mlp_width)]
                selectors.insert(0, P.SimilaritySelector(rec.explanation, cols))
            for sel in selectors:
                row = table.setdefault(sel.name, {})
                cells = [("no probe N=1", 1, False)] + [(f"N={n}", n, True) for n in P.NS]
                for col, n, use_probe in cells:
                    c = P.probe_counts(
                        m.X, m.y, sel, n, probe=use_probe, folds=folds, seed=seed, unit=rec.neuron
                    )
                    f1 = obs.prf(c).f1
                    if f1 is not None:
                        row.setdefault(col, []).append(f1)
    cols = ["no probe N=1"] + [f"N={n}" for n in P.NS]
    t = Table("F1 (mean over explanations)", *cols, title=f"probe on {info.id}")
    paper = {
        "random": [0.00, 0.29, 0.44, 0.54, 0.69],
        "GPT-4 explanations": [0.56, 0.60, 0.64, 0.67, 0.73],
    }
    for name, vals in paper.items():
        t.add_row(f"paper: {name}", *(f"{v:.2f}" for v in vals))
    for name, row in table.items():
        t.add_row(
            name,
            *(
                f"{sum(row[c]) / len(row[c]):.2f} (n={len(row[c])})" if row.get(c) else "—"
                for c in cols
            ),
        )
    console.print(t)
    console.print(
        f"{len(picked)} explanations, {skipped} items skipped (span not found in the sentence)"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(neurons_app, name="neurons")
