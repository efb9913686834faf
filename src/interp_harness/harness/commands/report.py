"""`harness report RUN [RUN...]`: the evaluator's report (FIND's Table 2 layout) of one run with
its floor run, or of several runs and their floors in one table (the main job's last step)."""

from __future__ import annotations

import sys

import typer

from interp_harness.harness.commands._table import stderr, stdout

REDUCERS = ("mean", "max", "at_least_one")


def report(
    run_ids: list[str] = typer.Argument(
        ...,
        metavar="RUN...",
        help="a run id (or a unique start of one); several: one report of them all, each with "
        "its floor run",
    ),
    as_json: bool = typer.Option(False, "--json"),
    epoch_reducer: str = typer.Option(
        None,
        "--epoch-reducer",
        help="reduce a target's repeated samples with mean | max | at_least_one instead of "
        "the run's own reducer",
    ),
) -> None:
    """Print the evaluator's report for a run (with its floor run), or one for several runs."""
    from interp_harness.harness.commands._ids import cli_store, run_or_exit
    from interp_harness.harness.runs.report import (
        ReportUnavailable,
        build_combined_report,
        build_report,
    )
    from interp_harness.harness.runs.views import IMPORTED

    if epoch_reducer not in (None, *REDUCERS):
        raise typer.BadParameter("--epoch-reducer must be mean, max or at_least_one")
    store = cli_store()
    runs = list({r.id: r for r in (run_or_exit(store, typed) for typed in run_ids)}.values())
    out, err = stdout(), stderr()
    try:
        if len(runs) > 1:
            combined = build_combined_report(store, runs, epoch_reducer)  # type: ignore[arg-type]
            if as_json:
                sys.stdout.write(combined.model_dump_json(indent=2) + "\n")
                return
            for rid in combined.imported:
                out.print(f"[yellow]note: run {rid}: {IMPORTED}[/yellow]")
            if not _render(out, combined.report):
                sys.stdout.write(combined.model_dump_json(indent=2) + "\n")
                return
            _summary(out, combined)
            return
        rep = build_report(store, runs[0], epoch_reducer)  # type: ignore[arg-type]
    except ReportUnavailable as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    if not as_json:
        if rep.imported:
            out.print(f"[yellow]note: {IMPORTED}[/yellow]")
        if _render(out, rep.report):
            return
        if rep.text is not None:
            sys.stdout.write(rep.text + "\n")
            return
    sys.stdout.write(rep.model_dump_json(indent=2) + "\n")


def _render(out, report: object) -> bool:  # type: ignore[no-untyped-def]
    """Print the evaluator's own table of `report` (JSON), when it has one."""
    try:
        from interp_harness.evaluator.report import Report, render_report  # type: ignore[import-not-found]

        out.print(render_report(Report.model_validate(report)))
        return True
    except (ImportError, ValueError):
        return False


def _summary(out, combined) -> None:  # type: ignore[no-untyped-def]
    """The lines the main job's log ends with: the report's size, and the judge's time."""
    rows = combined.report.get("rows", [])
    errors = sum(sum(r.get("errors", {}).values()) for r in rows)
    out.print(f"report: {len(rows)} rows, {errors} errors", highlight=False)
    if combined.judged_episodes:
        out.print(
            f"description scoring: {combined.judge_wall_s:.1f} s of judge time over "
            f"{combined.judged_episodes} episodes",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command("report")(report)
