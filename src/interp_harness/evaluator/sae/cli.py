"""`harness sae ...`: build the offline SAE the SAE-latent benchmark explains, and list the built
ones. The benchmark record names `sae_app` (`cli`); the harness CLI adds it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from interp_harness.function_store.sae.catalog import BuildOptions, SAECatalog, sae_dir

console = Console()
_D = BuildOptions()  # the flags' defaults
sae_app = typer.Typer(no_args_is_help=True, help="SAE latents: build an SAE and its catalog.")


def _report_table(cats: list[SAECatalog], title: str) -> Table:
    """One column per SAE, one row per figure: narrow enough for any terminal or log."""
    t = Table(title=title)
    t.add_column("", style="bold")
    for c in cats:
        t.add_column(c.sae, justify="right")
    rows: list[tuple[str, list[str]]] = [
        ("model", [c.model for c in cats]),
        ("hook", [c.hook_name for c in cats]),
        ("d_in / d_sae", [f"{c.d_in} / {c.d_sae}" for c in cats]),
        ("k (TopK)", ["—" if c.k is None else str(c.k) for c in cats]),
        ("FVE (held-out)", [f"{c.report.fve:.3f}" for c in cats]),
        ("L0 (held-out)", [f"{c.report.l0:.1f}" for c in cats]),
        ("dead / dense latents", [f"{c.report.dead} / {c.report.dense}" for c in cats]),
        ("latents in the catalog", [str(len(c.latents)) for c in cats]),
        (
            "tokens: train / held-out",
            [f"{c.report.tokens} / {c.report.held_out_tokens}" for c in cats],
        ),
        (
            "held-out texts: scoring / reference",  # disjoint: references fitted out of sample
            [f"{c.report.held_out_texts} / {c.report.reference_texts}" for c in cats],
        ),
        ("time", [f"{c.report.seconds:.0f} s ({c.report.device})" for c in cats]),
        ("saved in", [str(sae_dir(c.sae)) for c in cats]),
    ]
    for label, values in rows:
        t.add_row(label, *values)
    return t


@sae_app.command("build")
def build(
    model: str = typer.Option(
        _D.model, help="the model (as `harness intervention serve` names it)"
    ),
    layer: int = typer.Option(_D.layer, min=0, help="the layer of the hook site"),
    component: str = typer.Option(
        _D.component,
        help="block_output (resid_post), block_input (resid_pre), mlp_output, attention_output",
    ),
    d_sae: int = typer.Option(_D.d_sae, min=2, help="latents of the SAE"),
    k: int = typer.Option(_D.k, min=1, help="TopK: active latents per token"),
    tokens: int = typer.Option(_D.tokens, min=16, help="training tokens"),
    steps: int = typer.Option(_D.steps, min=1, help="training steps"),
    batch_size: int = typer.Option(_D.batch_size, min=1, help="tokens per step"),
    lr: float = typer.Option(_D.lr, help="Adam's learning rate"),
    seed: int = typer.Option(_D.seed, help="corpus split, initialisation and catalog sample"),
    n_latents: int = typer.Option(
        _D.n_latents, min=1, help="latents in the catalog (seeded sample)"
    ),
    min_density: float = typer.Option(
        _D.min_density, help="latents below this density count as dead"
    ),
    max_density: float = typer.Option(
        _D.max_density, help="latents above this density count as dense"
    ),
    name: str | None = typer.Option(None, help="the SAE's name (default <model>-l<layer>-topk)"),
    device: str = typer.Option(_D.device, help="auto, cpu or cuda"),
    force: bool = typer.Option(False, help="rebuild even when built with the same options"),
) -> None:
    """Train a TopK SAE on one site of the model, save it (SAELens format) and its catalog."""
    from pydantic import ValidationError

    from interp_harness.function_store.sae.build import build_sae

    try:
        options = BuildOptions(
            model=model,
            layer=layer,
            component=component,  # type: ignore[arg-type]  # validated by pydantic
            d_sae=d_sae,
            k=k,
            tokens=tokens,
            steps=steps,
            batch_size=batch_size,
            lr=lr,
            seed=seed,
            n_latents=n_latents,
            min_density=min_density,
            max_density=max_density,
            name=name,
            device=device,
            force=force,
        )
        cached = _cached(options)
        cat = build_sae(options)
    except (ValidationError, ValueError) as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from None
    what = "cached (same options; --force rebuilds)" if cached else "built"
    console.print(_report_table([cat], f"SAE {what}: reconstruction on held-out tokens"))


def _cached(options: BuildOptions) -> bool:
    """Whether build_sae will reuse the cached build (to say so)."""
    from interp_harness.function_store.datasets import DataUnavailable
    from interp_harness.function_store.sae.catalog import load

    if options.force:
        return False
    try:
        return load(options.sae_name()).options_hash == options.options_hash()
    except (DataUnavailable, ValueError):
        return False


@sae_app.command("list")
def list_saes() -> None:
    """The built SAEs with their build report."""
    from interp_harness.function_store.sae.catalog import built, load

    names = built()
    if not names:
        console.print("no SAE built yet: `harness sae build`")
        return
    console.print(_report_table([load(n) for n in names], "built SAEs"))


@sae_app.command("add")
def add(
    name: str = typer.Argument(..., help="the name the benchmark and the service will use"),
    path: Path = typer.Argument(
        ..., help="a SAELens SAE folder (cfg.json, sae_weights.safetensors)"
    ),
    model: str = typer.Option(
        ..., help="the model it reads, as `harness intervention serve` names it"
    ),
    n_latents: int = typer.Option(
        _D.n_latents, min=1, help="latents in the catalog (seeded sample)"
    ),
    min_density: float = typer.Option(_D.min_density, help="latents below count as dead"),
    max_density: float = typer.Option(_D.max_density, help="latents above count as dense"),
    seed: int = typer.Option(_D.seed, help="held-out split and catalog sample"),
    device: str = typer.Option(_D.device, help="auto, cpu or cuda"),
) -> None:
    """Catalog an SAE trained elsewhere (any SAELens SAE on disk: GPT-2 small residual SAEs, Gemma
    Scope, ...): its files are copied beside the built ones, where the service finds them."""
    import shutil

    from pydantic import ValidationError

    from interp_harness.function_store.datasets import DataUnavailable
    from interp_harness.function_store.sae.build import catalog_sae
    from interp_harness.model_services.intervention.saelens import CFG, WEIGHTS

    try:
        options = BuildOptions(
            model=model,
            name=name,
            n_latents=n_latents,
            min_density=min_density,
            max_density=max_density,
            seed=seed,
            device=device,
        )
        if not (path / CFG).is_file() or not (path / WEIGHTS).is_file():
            raise ValueError(f"{path}: not a SAELens SAE folder ({CFG} and {WEIGHTS})")
        dest = sae_dir(name)
        if dest.exists():
            raise ValueError(f"an SAE named {name!r} exists already ({dest})")
        dest.mkdir(parents=True)
        try:
            for f in (CFG, WEIGHTS):
                shutil.copy(path / f, dest / f)
            cat = catalog_sae(name, options)
        except BaseException:
            shutil.rmtree(dest)  # nothing half-added: the name stays free
            raise
    except (ValidationError, ValueError, DataUnavailable) as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from None
    console.print(_report_table([cat], f"SAE {name} added: reconstruction on held-out tokens"))
