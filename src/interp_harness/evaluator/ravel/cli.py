"""`harness ravel build` (a model-specific RAVEL instance) and `harness ravel eval` (methods ×
Cause / Isolate / Disentangle on its test split). The benchmark record names `ravel_app` (`cli`);
the harness CLI adds it."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

console = Console()
err = Console(stderr=True)
ravel_app = typer.Typer(no_args_is_help=True, help="RAVEL: instances and attribute localisation.")

MODEL = typer.Option(
    "smollm2", help="model the intervention service serves (see `intervention serve`)"
)
URL = typer.Option(
    None, help="intervention service URL (default HARNESS_INTERVENTION_URL, else start one)"
)


def _config(entity_type: str, seed: int, attributes: list[str] | None, **sizes: int):
    from interp_harness.function_store.ravel.instances import BuildConfig

    return BuildConfig(entity_type=entity_type, seed=seed, attributes=attributes or None, **sizes)


def _build(client, cfg, fresh: bool):
    from interp_harness.function_store.ravel.instances import build

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
    ) as bar:
        task = bar.add_task(f"generating ({cfg.entity_type})", total=None)
        return build(
            client,
            cfg,
            progress=lambda d, t: bar.update(task, completed=d, total=t),
            use_cache=not fresh,
        )


@ravel_app.command("build")
def build_cmd(
    model: str = MODEL,
    entity_type: str = typer.Option(
        "city", help="city, nobel_prize_winner, occupation, physical_object, verb"
    ),
    seed: int = typer.Option(0),
    attribute: list[str] = typer.Option(
        [], help="attributes to keep (repeat; default all with gold values)"
    ),
    train_entities: int = typer.Option(24, min=2),
    test_entities: int = typer.Option(12, min=2),
    candidate_factor: float = typer.Option(3.0, min=1, help="candidates screened per kept entity"),
    templates: int = typer.Option(2, min=1, help="templates per attribute and split"),
    train_candidates: str = typer.Option("", help="comma-separated train-split entities to screen"),
    test_candidates: str = typer.Option("", help="comma-separated test-split entities to screen"),
    url: str | None = URL,
    fresh: bool = typer.Option(False, help="rebuild even when cached"),
) -> None:
    """Query the model on RAVEL prompts and build (base, source) pairs from what it gets right."""
    from interp_harness.function_store.ravel.instances import cache_path
    from interp_harness.function_store.ravel.service import intervention_client

    cfg = _config(
        entity_type,
        seed,
        attribute,
        n_train_entities=train_entities,
        n_test_entities=test_entities,
        candidate_factor=candidate_factor,
        templates_per_split=templates,
    )
    if train_candidates or test_candidates:
        given = {"train": train_candidates, "test": test_candidates}
        cfg.candidates = {
            k: [e.strip() for e in v.split(",") if e.strip()] for k, v in given.items()
        }
    with intervention_client(model, url) as client:
        t0 = time.monotonic()
        inst = _build(client, cfg, fresh)
        took = time.monotonic() - t0
        path = cache_path(inst.model, cfg)
    table = Table(title=f"RAVEL-{inst.model} {entity_type} (seed {seed}) — {took:.0f}s")
    for col in ("attribute", "train", "context_test", "entity_test"):
        table.add_column(col, justify="left" if col == "attribute" else "right")
    for a in inst.attributes:
        table.add_row(
            a,
            *(
                str(sum(e.attribute == a for e in inst.examples[s]))
                for s in ("train", "context_test", "entity_test")
            ),
        )
    console.print(table)
    console.print(
        f"entities kept: train {len(inst.entities['train'])}, test {len(inst.entities['test'])}; cached at {path}"
    )


@ravel_app.command("eval")
def eval_cmd(
    model: str = MODEL,
    entity_type: str = typer.Option("city"),
    attribute: list[str] = typer.Option(["Country"], help="target attributes (repeat)"),
    methods: str = typer.Option("nothing,full,random,pca,sae,rlap,dbm,das,mdbm,mdas"),
    layer: int = typer.Option(8, min=0),
    split: str = typer.Option("context_test", help="context_test or entity_test"),
    per_template: int = typer.Option(8, min=1, help="test pairs per base template"),
    epochs: int = typer.Option(2, min=1),
    seed: int = typer.Option(0),
    train_entities: int = typer.Option(24, min=2),
    test_entities: int = typer.Option(12, min=2),
    candidate_factor: float = typer.Option(3.0, min=1),
    templates: int = typer.Option(2, min=1),
    instance: Path | None = typer.Option(None, help="an instance file (`build` prints its path)"),
    url: str | None = URL,
) -> None:
    """Train and score each method (paper layout: method × Cause / Isolate / Disentangle)."""
    from interp_harness.evaluator.ravel.bench import run_methods
    from interp_harness.evaluator.ravel.methods import Hyper
    from interp_harness.evaluator.ravel.methods.local import LocalModel
    from interp_harness.function_store.ravel.service import intervention_client
    from interp_harness.model_services.intervention import model as model_mod

    names = [m.strip() for m in methods.split(",") if m.strip()]
    cfg = _config(
        entity_type,
        seed,
        None,
        n_train_entities=train_entities,
        n_test_entities=test_entities,
        candidate_factor=candidate_factor,
        templates_per_split=templates,
    )
    with intervention_client(model, url) as client:
        if instance is not None:
            from interp_harness.function_store.ravel.instances import Instance

            inst = Instance.model_validate_json(instance.read_text(encoding="utf-8"))
        else:
            inst = _build(client, cfg, False)
        local = LocalModel(model_mod.load(model, device="cpu", dtype="float32"), layer)
        rows = run_methods(
            client,
            local,
            inst,
            attribute,
            names,
            split=split,
            per_template=per_template,
            hyper=Hyper(seed=seed, epochs=epochs),
            on_row=lambda r: err.print(
                f"  {r.attribute} {r.method}: C={r.cause:.3f} I={r.isolate:.3f} D={r.disentangle:.3f} "
                f"(train {r.train_s:.0f}s, eval {r.eval_s:.0f}s)"
            ),
        )
    for a in attribute:
        table = Table(title=f"RAVEL-{inst.model} {entity_type} → {a}, layer {layer}, {split}")
        for col in ("method", "dims", "Cause", "Isolate", "Disentangle", "train s", "eval s"):
            table.add_column(col, justify="left" if col == "method" else "right")
        for r in (r for r in rows if r.attribute == a):
            table.add_row(
                r.method,
                "all" if r.dims is None and r.method == "full" else str(r.dims or "-"),
                f"{r.cause:.3f}",
                f"{r.isolate:.3f}",
                f"{r.disentangle:.3f}",
                f"{r.train_s:.1f}",
                f"{r.eval_s:.1f}",
            )
        console.print(table)
        first = next(r for r in rows if r.attribute == a)
        console.print(f"pairs scored: cause {first.n_cause}, isolate {first.n_isolate}")
