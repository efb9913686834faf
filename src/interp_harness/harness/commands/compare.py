"""`harness compare RUN RUN...`: runs on their shared targets, pair by pair, with paired tests
(McNemar for pass/fail rows, the paired bootstrap for means), the inputs each used, and each
run's floor on the same targets."""

from __future__ import annotations

import sys

import typer

from interp_harness.harness.commands._table import stdout


def compare(
    run_ids: list[str] = typer.Argument(
        ..., metavar="RUN RUN...", help="two or more run ids (or unique starts of them)"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Compare runs on the targets they share: paired statistics per report row."""
    from interp_harness.evaluator.compare import render_comparison
    from interp_harness.harness.commands._ids import cli_store, run_or_exit
    from interp_harness.harness.runs.compare import build_comparison

    store = cli_store()
    runs = list({r.id: r for r in (run_or_exit(store, typed) for typed in run_ids)}.values())
    if len(runs) < 2:
        raise typer.BadParameter("name at least two different runs")
    comp = build_comparison(store, runs)
    if as_json:
        sys.stdout.write(comp.model_dump_json(indent=2) + "\n")
        return
    stdout().print(render_comparison(comp))


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
