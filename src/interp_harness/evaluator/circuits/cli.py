"""`harness circuits ...`: build the compiled targets into the cache, list them, show one (its
ground truth only with `--reveal`). The benchmark record names `circuits_app` (`cli`)."""

from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from interp_harness.function_store.circuits import build as cb

console = Console()
_D = cb.BuildOptions()
circuits_app = typer.Typer(
    no_args_is_help=True, help="Circuits: compile the targets (tracr), list and show them."
)


@circuits_app.command("build")
def build(
    per_program: int = typer.Option(_D.per_program, min=0, help="circuits-lib targets per program"),
    program: list[str] = typer.Option(
        None, "--program", help="library programs to build (repeat; default: all)"
    ),
    gen_count: int = typer.Option(_D.gen_count, min=0, help="circuits-gen targets"),
    gen_seed: int = typer.Option(
        _D.gen_seed, min=0, help="circuits-gen seed (ids circuits-gen/SEED/k)"
    ),
    force: bool = typer.Option(False, help="rebuild targets found in the cache"),
) -> None:
    """Compile every target once (weights and hidden truth into the cache; cached by digest)."""
    opts = cb.BuildOptions(
        per_program=per_program,
        programs=list(program) if program else None,
        gen_count=gen_count,
        gen_seed=gen_seed,
    )
    t0 = time.perf_counter()
    try:
        done = cb.build(opts, force=force, progress=console.print)
    except ImportError as e:  # tracr, jax or haiku missing
        console.print(f"[red]cannot compile: {e}; install the harness's dependencies[/red]")
        raise typer.Exit(2) from None
    n = sum(len(v) for v in done.values())
    console.print(f"{n} targets in {cb.root()} ({time.perf_counter() - t0:.1f} s)")


@circuits_app.command("list")
def list_targets(dataset: str = typer.Option(None, help="circuits-lib or circuits-gen")) -> None:
    """The built targets and their shapes (no ground truth)."""
    t = Table(title=f"circuits targets in {cb.root()}")
    for col in ("id", "vocabulary", "max len", "layers x heads", "output"):
        t.add_column(col)
    for d in [dataset] if dataset else list(cb.DATASETS):
        cat = cb.load_catalog(d)
        for row in cat.targets if cat else []:
            t.add_row(
                row.id,
                " ".join(map(str, row.vocab)),
                str(row.max_len),
                f"{row.n_layers} x {row.n_heads}",
                row.output_kind,
            )
    console.print(t)


@circuits_app.command("show")
def show(
    target_id: str = typer.Argument(..., help="e.g. circuits-lib/sort/0"),
    reveal: bool = typer.Option(False, help="print the ground truth (circuit, program, roles)"),
) -> None:
    """One target's shape; with --reveal its circuit, the program and each component's role."""
    dataset = target_id.split("/")[0]
    cat = cb.load_catalog(dataset) if dataset in cb.DATASETS else None
    row = next((r for r in cat.targets if r.id == target_id), None) if cat else None
    if row is None:
        console.print(f"[red]{target_id} is not built[/red] ({cb.BUILD_HINT})")
        raise typer.Exit(1)
    console.print(
        f"{row.id}: vocabulary {row.vocab}, inputs up to {row.max_len} tokens, "
        f"{row.n_layers} layers x {row.n_heads} heads, {row.output_kind} outputs"
    )
    if not reveal:
        return
    truth = cb.load_truth(cb.root() / dataset / row.truth)
    console.print("asked program:")
    console.print(truth.program, markup=False)
    t = Table(title="components")
    for col in ("component", "program", "role (tracr variable)"):
        t.add_column(col)
    for c in truth.components:
        who = "asked" if truth.owner[c] == 0 else f"distractor {truth.owner[c]}"
        t.add_row(c, who, escape(truth.roles.get(c, "")))
    console.print(t)
    console.print(f"circuit: {', '.join(truth.circuit)}")
    for i, d in enumerate(truth.distractors, 1):
        console.print(f"distractor {i}:")
        console.print(d, markup=False)
