"""`harness targets list|show|call`."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console

from interp_harness.function_store.catalog import (
    Catalog,
    CatalogOptions,
    UnknownDataset,
    UnknownTarget,
)
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.formatting import find_line
from interp_harness.function_store.models import Target
from interp_harness.function_store.runtime import (
    NoBackboneConfigured,
    TargetUnavailable,
    call_target,
)
from interp_harness.harness.commands import family_help
from interp_harness.harness.commands._table import Col, fitted, print_table, stdout
from interp_harness.harness.sandbox.find_scripts import install_script_sandbox

console = Console()
err = Console(stderr=True)
targets_app = typer.Typer(no_args_is_help=True, help="Browse and call benchmark targets.")


def _catalog(seed: int) -> Catalog:
    install_script_sandbox()  # FIND folder release checks run their scripts in bwrap
    return Catalog(CatalogOptions(gen_seed=seed))


COLUMNS = (
    Col("id", "id"),
    Col("family", "id"),
    Col("variant", "id"),
    Col("input", "id"),
    Col("available", "text"),
)


class UnavailableNotes:
    """Why targets are unavailable, each reason said once under the table: a reason that names
    its target (its id, or the id's last part) is the same note for every target it names."""

    def __init__(self) -> None:
        self._notes: dict[str, list[str]] = {}  # reason, target-neutral -> target ids

    def cell(self, t: Target) -> str:
        if t.available:
            return "yes"
        name = t.id.rsplit("/", 1)[-1]
        reason = str(t.unavailable_reason).replace(t.id, "<id>")
        if len(name) >= 4:  # a name this short could be any part of the text
            reason = reason.replace(name, "<name>")
        ids = self._notes.setdefault(reason, [])
        ids.append(t.id)
        return f"no: note {list(self._notes).index(reason) + 1}"

    def lines(self) -> list[str]:
        out = []
        for i, (reason, ids) in enumerate(self._notes.items(), 1):
            which = "1 target" if len(ids) == 1 else f"{len(ids)} targets"
            names = []
            if "<id>" in reason:
                names.append("<id>: the target's id")
            if "<name>" in reason:
                names.append("<name>: the last part of its id")
            where = f"; {', '.join(names)}" if names and len(ids) > 1 else ""
            text = (
                reason
                if len(ids) > 1
                else reason.replace("<id>", ids[0]).replace("<name>", ids[0].rsplit("/", 1)[-1])
            )
            out.append(f"note {i} ({which}{where}): {text}")
        return out


def _fail(e: Exception, code: int = 2) -> typer.Exit:
    err.print(f"[red]{e}[/red]")
    return typer.Exit(code)


@targets_app.command("list")
def list_(
    dataset: str = typer.Option(None, "--dataset", "-d", help="find-v1 | find-gen | find-import"),
    family: str = typer.Option(None, "--family", "-f", help=family_help()),
    variant: str = typer.Option(
        None, "--variant", help="e.g. clean | noised | corrupted | mlp | atomic | composed"
    ),
    seed: int = typer.Option(0, help="find-gen seed"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object per line"),
) -> None:
    """List target ids with their public metadata."""
    try:
        targets = _catalog(seed).list(dataset=dataset, family=family, variant=variant)
    except (UnknownDataset, ValueError, DataUnavailable) as e:
        raise _fail(e) from e
    if as_json:
        for t in targets:
            sys.stdout.write(t.public_view().model_dump_json() + "\n")
        return
    out = stdout()
    notes = UnavailableNotes()
    rows = [[t.id, t.family, t.variant, t.public.input_kind, notes.cell(t)] for t in targets]
    print_table(out, fitted(COLUMNS, rows, out.width))
    for line in notes.lines():
        out.print(line, markup=False, highlight=False)
    out.print(f"{len(targets)} targets", highlight=False)


@targets_app.command("show")
def show(
    target_id: str,
    reveal: bool = typer.Option(False, "--reveal", help="also print the hidden ground truth"),
) -> None:
    """Show a target's public metadata (and, with --reveal, its ground truth)."""
    try:
        t = _catalog(0).get(target_id)
    except (UnknownTarget, DataUnavailable) as e:
        raise _fail(e) from e
    console.print_json(t.public_view().model_dump_json())
    if reveal:
        err.print(
            "[bold yellow]warning: printing hidden ground truth; never show it to an interpreter[/bold yellow]"
        )
        console.print_json(
            json.dumps(
                {
                    "hidden": t.hidden.model_dump(),
                    "unit_tests": [u.model_dump() for u in t.unit_tests],
                }
            )
        )


@targets_app.command(
    "call", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
def call(
    target_id: str,
    inputs: list[str] = typer.Argument(..., help="inputs, as an agent would type them"),
) -> None:
    """Call a target and print FIND's line: `Function input - output pairs: (x, y) ...`."""
    try:
        t = _catalog(0).get(target_id)
        outputs = call_target(t, inputs)
    except (UnknownTarget, DataUnavailable, TargetUnavailable, NoBackboneConfigured) as e:
        raise _fail(e, 1) from e
    sys.stdout.write(find_line(outputs) + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(targets_app, name="targets")
