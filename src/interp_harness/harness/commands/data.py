"""`harness data list|fetch|verify`: reference datasets."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from interp_harness.function_store import datasets

console = Console()
data_app = typer.Typer(
    no_args_is_help=True, help="Reference datasets (FIND metadata, RAVEL, neuron explanations)."
)


@data_app.command("list")
def list_() -> None:
    """List registered datasets and whether the data directory holds them."""
    t = Table("name", "files", "status", "description")
    for ds in datasets.DATASETS.values():
        status = datasets.verify(ds.name)
        ok = sum(v == "ok" for v in status.values())
        t.add_row(ds.name, str(len(ds.files)), f"{ok}/{len(status)} ok", ds.description)
    console.print(f"data directory: {datasets.data_dir()}")
    console.print(t)
    for ds in datasets.DATASETS.values():
        if ds.notes:
            console.print(f"{ds.name}: {ds.notes}")


@data_app.command("fetch")
def fetch(name: str) -> None:
    """Download NAME from its official source into the cache, checking every checksum."""
    try:
        with console.status(f"fetching {name}"):
            dest = datasets.fetch(name, progress=lambda p: console.print(f"  {p}"))
    except KeyError as e:
        console.print(f"[red]{e.args[0]}[/red]")
        raise typer.Exit(2) from e
    except datasets.DataUnavailable as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    console.print(f"[green]{name}[/green] is in {dest}")


@data_app.command("verify")
def verify(name: str) -> None:
    """Check the checksums of NAME's files in the data directory."""
    bad = {k: v for k, v in datasets.verify(name).items() if v != "ok"}
    for k, v in bad.items():
        console.print(f"[red]{v}[/red] {k}")
    if bad:
        raise typer.Exit(1)
    console.print(f"[green]all files of {name} ok[/green] in {datasets.data_dir()}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
