"""`harness neurons ...`: the neuron-explanation benchmark (Huang et al. 2023) from the command
line: observational P/R/F1 of the released explanations, probes, IIA / IIA@K. The benchmark
record names `neurons_app` (`cli`); the harness CLI adds it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import typer
from rich.console import Console
from rich.table import Table

console = Console()
neurons_app = typer.Typer(
    no_args_is_help=True, help="Neuron explanations (Huang et al. 2023): P/R/F1, probes, IIA."
)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _ci(iv: Any) -> str:
    return "" if iv is None else f"[{iv.low:.3f}, {iv.high:.3f}]"


def _live_observations(
    records: list, url: str | None, n: int, seed: int, threshold: float
) -> tuple[list, list]:
    """The released items and labels, a(q) read live. On a model other than GPT-2 XL, neuron
    L:I is read at the same relative depth and index I mod the MLP width (a smoke test)."""
    import random as _random

    from rich.progress import track

    from interp_harness.evaluator.neurons import live
    from interp_harness.evaluator.token_activations.observational import Observation

    picked = sorted(
        _random.Random(seed).sample(records, min(n, len(records))), key=lambda r: r.layer
    )
    out = []
    with _client(url) as client:
        info = client.model()
        is_xl = live.is_gpt2_xl(info)
        console.print(
            f"live activations from {info.id}" + ("" if is_xl else " (smoke test: mapped neurons)")
        )
        for rec in track(picked, description="reading activations", console=console):
            layer = rec.layer if is_xl else live.mapped_layer(rec.layer, info.n_layers)
            m = live.read_items(client, rec, layer, [rec.index % info.mlp_width])
            out += [
                Observation(rec.neuron, bool(y), bool(x[0] > threshold), str(rec.layer))
                for x, y in zip(m.X, m.y, strict=True)
            ]
    return picked, out


@neurons_app.command("observational")
def observational(
    source: str = typer.Option(
        "activations",
        help="activations: fires ⇔ max shipped activation over the span > threshold (the "
        "paper's rule); labels: the shipped TP/FP/FN/TN labels as they are; live: the same "
        "rule on activations read from the intervention service (--url)",
    ),
    url: str | None = typer.Option(
        None, help="live: intervention service (or $HARNESS_INTERVENTION_URL)"
    ),
    neurons: int = typer.Option(255, min=1, help="live: how many released neurons (seeded sample)"),
    threshold: float = typer.Option(0.0, help="τ: the neuron is on iff a(q) > τ"),
    boot: int = typer.Option(1000, min=0, help="bootstrap resamples of neurons (0: none)"),
    seed: int = typer.Option(0, help="bootstrap seed"),
    per_layer: bool = typer.Option(True, help="print the per-layer breakdown"),
    json_out: Path | None = typer.Option(None, "--json", help="also write the full report here"),
) -> None:
    """P/R/F1 of the 255 released GPT-4 explanations from the released file alone."""
    from interp_harness.evaluator.neurons import released
    from interp_harness.evaluator.token_activations import observational as obs
    from interp_harness.function_store.datasets import DataUnavailable
    from interp_harness.function_store.token_activations import neuron_release as data

    if source not in ("activations", "labels", "live"):
        raise typer.BadParameter("activations, labels or live", param_hint="--source")
    try:
        records = data.load()
    except DataUnavailable as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    if source == "live":
        records, observations = _live_observations(records, url, neurons, seed, threshold)
    else:
        observations = list(
            released.observations(records, cast(released.FiringSource, source), threshold)
        )
    flagged = sum(it.mismatched for r in records for it in r.items)
    with console.status("scoring and bootstrapping"):
        rep = obs.evaluate(observations, n_boot=boot, seed=seed)
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
    console.print(_chance_table(o))
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


def _chance_table(o: Any) -> Table:
    """What claiming every item earns on the same items, and the chance-corrected score
    (docs/evaluator.md, "Chance and the vacuous explanation")."""
    t = Table("", "precision", "recall", "F1", "MCC", title="chance on the same items")
    vm, va = o.vacuous_micro, o.vacuous_macro
    t.add_row(
        "vacuous (claims every item), micro",
        _fmt(vm.precision),
        _fmt(vm.recall),
        _fmt(vm.f1),
        _fmt(0.0),
    )
    t.add_row("vacuous, macro", _fmt(va.precision), _fmt(va.recall), _fmt(va.f1), _fmt(0.0))
    t.add_row("GPT-4 explanations, micro", "", "", "", _fmt(o.micro_mcc))
    t.add_row(
        f"GPT-4 explanations, macro ({o.macro_mcc_n} of {o.neurons} defined)",
        "",
        "",
        "",
        _fmt(o.macro_mcc),
    )
    return t


def _client(url: str | None):
    import os

    from interp_harness.model_services.intervention.client import InterventionClient

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

    from interp_harness.evaluator.neurons import live
    from interp_harness.evaluator.neurons import probe as P
    from interp_harness.evaluator.token_activations import observational as obs
    from interp_harness.function_store.token_activations import neuron_release as data

    records = data.load()
    picked = _random.Random(seed).sample(records, min(explanations, len(records)))
    with _client(url) as client:
        info = client.model()
        is_xl = live.is_gpt2_xl(info)
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


@neurons_app.command("tasks")
def tasks(
    url: str | None = typer.Option(
        None, help="intervention service (default: $HARNESS_INTERVENTION_URL)"
    ),
) -> None:
    """The 12 intervention tasks and how many fillers the served model completes correctly."""
    from interp_harness.evaluator.neurons import iia as I
    from interp_harness.function_store.neurons.tasks import TASKS

    with _client(url) as client:
        model = client.model().id
        t = Table(
            "task",
            "fillers",
            "correct",
            "pass rate",
            "outputs kept",
            "example",
            title=f"filter on {model}",
        )
        for task in TASKS.values():
            with console.status(task.name):
                kept = I.filter_fillers(client, task)
            outs = len({e for _, e in kept})
            t.add_row(
                task.name,
                str(len(task.fillers)),
                str(len(kept)),
                f"{len(kept) / len(task.fillers):.0%}",
                str(outs),
                task.prompt(task.fillers[0][0]),
            )
    console.print(t)
    console.print("A task is usable when at least two distinct expected outputs are kept.")


@neurons_app.command("iia")
def iia_cmd(
    task: str = typer.Option("capital_retrieval", help="one of `harness neurons tasks`"),
    layers: str = typer.Option("3,20", help="comma-separated layers, one IIA@K curve each"),
    pairs: int = typer.Option(256, min=1, help="(base, source) pairs (the paper: 256)"),
    ks: str = typer.Option("1,6,12,25,50,75,100", help="K values, % of the layer's neurons"),
    seed: int = typer.Option(0, help="pair and random-ranking seed"),
    svg: Path | None = typer.Option(None, help="write the IIA-vs-K plot here (SVG)"),
    url: str | None = typer.Option(
        None, help="intervention service (default: $HARNESS_INTERVENTION_URL)"
    ),
) -> None:
    """IIA@K of one task for each layer, three rankings: explanation similarity (exemplar
    explanations of every neuron from a probe corpus, the method under test offline), random,
    token-activation correlation."""
    from rich.progress import Progress

    from interp_harness.agents.scripted_neuron import SENTENCES
    from interp_harness.evaluator.neurons import iia as I
    from interp_harness.evaluator.neurons.plot import iia_svg
    from interp_harness.function_store.neurons.tasks import TASKS

    if task not in TASKS:
        raise typer.BadParameter(f"known: {', '.join(TASKS)}", param_hint="--task")
    tk = TASKS[task]
    layer_list = [int(x) for x in layers.split(",") if x.strip()]
    k_list = [float(x) for x in ks.split(",") if x.strip()]
    results: dict[str, dict[str, list[float]]] = {}
    with _client(url) as client:
        info = client.model()
        bad = [x for x in layer_list if not 0 <= x < info.n_layers]
        if bad:
            raise typer.BadParameter(f"{bad}: the model has layers 0..{info.n_layers - 1}")
        with console.status("filtering fillers"):
            kept = I.filter_fillers(client, tk)
        prs = I.make_pairs(kept, pairs, seed)
        console.print(
            f"{task} on {info.id}: {len(kept)}/{len(tk.fillers)} fillers correct, {len(prs)} pairs"
        )
        if not prs:
            console.print("[red]fewer than two distinct outputs survive the filter: no pairs[/red]")
            raise typer.Exit(1)
        n_runs = len(layer_list) * (
            3 * sum(k < 100 for k in k_list) + any(k >= 100 for k in k_list)
        )
        with Progress(console=console) as bar:
            job = bar.add_task("interchange", total=n_runs * len(prs))
            for layer in layer_list:
                rankings = {
                    "explanation similarity": I.similarity_ranking(
                        tk.concept, I.exemplar_explanations(client, SENTENCES, layer)
                    ),
                    "random": I.random_ranking(info.mlp_width, seed),
                    "correlation": I.correlation_ranking(client, tk, [f for f, _ in kept], layer),
                }
                whole = None
                for name, ranking in rankings.items():
                    row = results.setdefault(f"L{layer} {name}", {})
                    for k in k_list:
                        if k >= 100 and whole is not None:
                            row[f"{k:g}"] = [whole]
                            continue
                        v = I.iia(
                            client,
                            tk,
                            prs,
                            [layer],
                            info.n_layers,
                            I.top_k(ranking, k),
                            progress=lambda n: bar.advance(job, n),
                        )
                        if k >= 100:
                            whole = v
                        row[f"{k:g}"] = [v]
    t = Table("layer / ranking", *(f"K={k:g}%" for k in k_list), title=f"IIA@K, {task}, {info.id}")
    for name, row in results.items():
        t.add_row(name, *(f"{row[f'{k:g}'][0]:.2f}" for k in k_list))
    console.print(t)
    if svg:
        curves = {name: [row[f"{k:g}"][0] for k in k_list] for name, row in results.items()}
        svg.write_text(iia_svg(k_list, curves, title=f"IIA@K: {task} ({info.id})"))
        console.print(f"plot written to {svg}")


@neurons_app.command("score-explanation")
def score_explanation(
    explanation: str = typer.Argument(..., help="the explanation E to score"),
    layer: int = typer.Option(..., help="the neuron's layer"),
    index: int = typer.Option(..., help="the neuron's index in the MLP layer"),
    corpus: str = typer.Option("python-docs", help="python-docs, released, or file:<path>"),
    corpus_size: int = typer.Option(300, min=1, help="sentences mined for Type II probes"),
    n_type1: int = typer.Option(20, min=1, help="Type I strings the LM lists"),
    n_type2: int = typer.Option(20, min=1, help="Type II (activation-mined) items"),
    url: str | None = typer.Option(
        None, help="intervention service (default: $HARNESS_INTERVENTION_URL)"
    ),
) -> None:
    """P/R/F1 of a new explanation on its own test set (Type I + Type II probes; the LM is the
    judge setting, HARNESS_JUDGE_*), cached by (explanation, model, neuron)."""
    import asyncio

    from interp_harness.evaluator.judge import (
        JudgeError,
        JudgeNotConfigured,
        JudgeSettings,
        make_judge,
    )
    from interp_harness.evaluator.neurons import judge_probes as J
    from interp_harness.function_store.token_activations.corpus import load_corpus

    try:  # the judge setting, generating the Type I lists (long replies)
        judge = make_judge(JudgeSettings(mode="generate", max_tokens=1024))
    except JudgeNotConfigured:
        judge = None  # build_probe_set then says how to configure one
    with _client(url) as client:
        model = client.model().id
        texts = load_corpus(corpus, corpus_size)
        try:
            with console.status("building probes"):
                ps = asyncio.run(
                    J.build_probe_set(
                        explanation,
                        model=model,
                        layer=layer,
                        index=index,
                        client=client,
                        corpus=texts,
                        corpus_name=f"{corpus}:{corpus_size}",
                        judge=judge,
                        n_type1=n_type1,
                        n_type2=n_type2,
                    )
                )
        except (ValueError, JudgeError) as e:
            console.print(f"[red]{e}[/red]")
            raise typer.Exit(1) from e
        v, c = J.score_probe_set(ps, client, layer, index)
    n1 = sum(p.kind == "type1" for p in ps.probes)
    console.print(
        f"{model} {layer}:{index}, decider {ps.decider}: {n1} Type I + {len(ps.probes) - n1} "
        f"Type II probes ({ps.dropped} dropped); P {_fmt(v.precision)} R {_fmt(v.recall)} "
        f"F1 {_fmt(v.f1)} (TP {c.tp}, claimed {c.claimed}, fired {c.fired})"
    )


@neurons_app.command("compare-metrics")
def compare_metrics(
    simulator_url: str | None = typer.Option(
        None,
        help="OpenAI-compatible completions endpoint with logprobs, e.g. "
        "http://127.0.0.1:8000/v1 (`harness backbone serve`); default $HARNESS_SIMULATOR_URL; "
        "none: the lexical simulator",
    ),
    model: str | None = typer.Option(None, help="simulator model (default: the endpoint's first)"),
    lexical: bool = typer.Option(False, help="use the lexical simulator even if a URL is set"),
    neurons: int | None = typer.Option(
        None, min=3, help="compare a seeded sample of this many released neurons (default: all)"
    ),
    texts: str = typer.Option(
        "all", help="all: simulate every released item (both scores); top-random: only the 10 texts"
    ),
    seed: int = typer.Option(0, help="the neuron sample's seed"),
    planted_other: int = typer.Option(
        1000, min=10, help="planted case: held-out texts that mention neither year"
    ),
    planted_draws: int = typer.Option(100, min=1, help="planted case: top-and-random draws"),
    json_out: Path | None = typer.Option(None, "--json", help="also write the figures here"),
) -> None:
    """Huang et al.'s argument: the simulation score (Bills et al.) beside observational F1 for
    the released explanations, their correlation across neurons, and the planted case (a neuron
    firing on "2000" explained as "2000 and 2001")."""
    import asyncio

    from rich.progress import Progress

    from interp_harness.evaluator.judge import JudgeError
    from interp_harness.evaluator.neurons import compare as C
    from interp_harness.evaluator.neurons import planted
    from interp_harness.evaluator.simulation.simulator import (
        LexicalSimulator,
        Simulator,
        SimulatorSettings,
        make_simulator,
    )
    from interp_harness.function_store.datasets import DataUnavailable
    from interp_harness.function_store.token_activations import neuron_release as data

    if texts not in ("all", "top-random"):
        raise typer.BadParameter("all or top-random", param_hint="--texts")
    try:
        records = data.load()
    except DataUnavailable as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    settings = SimulatorSettings()
    updates = {k: v for k, v in (("url", simulator_url), ("model", model)) if v}
    settings = settings.model_copy(update=updates)

    async def both() -> tuple[C.Comparison, planted.PlantedResult]:
        sim: Simulator = LexicalSimulator() if lexical else make_simulator(settings)
        picked = C.sample(records, neurons, seed)
        try:
            with Progress(console=console, transient=True) as bar:
                task = bar.add_task(f"simulating {len(picked)} neurons", total=len(picked))
                comp = await C.compare(
                    picked,
                    sim,
                    texts=texts,  # type: ignore[arg-type]
                    seed=seed,
                    released_count=len(records),
                    progress=lambda k: bar.update(task, completed=k),
                )
            with console.status("planted case"):
                plant = await planted.run(sim, n_other=planted_other, draws=planted_draws)
        finally:
            await sim.aclose()
        return comp, plant

    try:
        comp, plant = asyncio.run(both())
    except JudgeError as e:  # the simulator failed: no figure
        console.print(f"[red]simulator failed: {e}[/red]")
        raise typer.Exit(1) from e
    console.print(
        f"simulator: [bold]{comp.simulator}[/bold] (not the paper's GPT-4); {comp.neurons} of "
        f"{comp.released} released neurons (seed {comp.seed}); texts: {comp.texts}"
        + (f"; {comp.unread} slots listed no level" if comp.unread else "")
    )
    t = Table("", "Pearson", "Spearman", "neurons", title="F1 against the simulation score")
    t.add_row("paper: F1 vs GPT-4 score (300 expl.)", "≈ -0.1", "", "300")
    for name, a in (("top-and-random", comp.f1_vs_top_random), ("all texts", comp.f1_vs_all)):
        t.add_row(f"F1 vs simulation, {name}", _fmt(a.pearson), _fmt(a.spearman), str(a.neurons))
    for name, b in (
        ("top-and-random", comp.lexical_vs_top_random),
        ("all texts", comp.lexical_vs_all),
    ):
        if b is not None:  # a model simulator: how far it agrees with the lexical one
            t.add_row(
                f"lexical vs this simulation, {name}",
                _fmt(b.pearson),
                _fmt(b.spearman),
                str(b.neurons),
            )
    console.print(t)
    console.print(
        f"means: simulation top-and-random {_fmt(comp.mean_top_random)}, all texts "
        f"{_fmt(comp.mean_all)}; F1 {_fmt(comp.mean_f1)}"
    )
    p = Table(
        "planted case", "value", title=f"neuron fires on 2000; explanation: {plant.explanation}"
    )
    p.add_row(
        "simulation, 5 top + 5 random (draw 0)",
        f"{_fmt(plant.top_random.value)} ({plant.top_random.tokens} tokens)",
    )
    p.add_row(
        f"  over {plant.draws} random draws: mean / min",
        f"{_fmt(plant.top_random_mean)} / {_fmt(plant.top_random_min)}",
    )
    p.add_row(
        f"simulation, all {plant.all.texts} texts",
        f"{_fmt(plant.all.value)} ({plant.all.tokens} tokens)",
    )
    p.add_row("observational precision / recall", f"{_fmt(plant.precision)} / {_fmt(plant.recall)}")
    console.print(p)
    if json_out:
        out = {"comparison": comp.model_dump(mode="json"), "planted": plant.model_dump(mode="json")}
        json_out.write_text(json.dumps(out, indent=1))
        console.print(f"written to {json_out}")
