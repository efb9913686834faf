"""`harness import-inspect LOG`: an Inspect AI eval log of one of our tasks becomes a harness run
(interp_harness.harness.inspect_tasks.importer). Operator-only: it writes the store this process is set up for."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console

err = Console(stderr=True)


def import_inspect(
    log: str = typer.Argument(
        ..., help="an Inspect log (.eval or .json) of an interp_harness task"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the new run as JSON"),
) -> None:
    """Import an Inspect eval log (`inspect eval interp_harness/...` or `harness export --format
    inspect`) as a finished run: its samples as episodes with transcripts, tool calls, scores and
    token usage, for `harness report`, `harness export` and the web UI."""
    try:
        from interp_harness.harness.inspect_tasks.importer import (
            ImportRefused,
            import_eval_log,
            read_log,
        )
    except ImportError as e:  # inspect-ai is an optional extra
        err.print(f"[red]importing an Inspect log needs inspect-ai ({e}): pip install inspect-ai")
        raise typer.Exit(2) from e
    from sqlalchemy.exc import SQLAlchemyError

    from interp_harness.harness.runs.views import run_out
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store.events import IMPORT_EVENT, DuplicateImport
    from interp_harness.harness.store.repo import open_store

    store = open_store(Settings().url)
    try:
        run_id = import_eval_log(store, read_log(log), source=log)
    except DuplicateImport as e:
        err.print(f"{e}; nothing imported", style="red", markup=False, soft_wrap=True)
        raise typer.Exit(1) from e
    except ImportRefused as e:
        _refused(log, str(e))
        raise typer.Exit(1) from e
    except (SQLAlchemyError, OverflowError) as e:  # what the checks missed: one transaction
        _refused(log, f"the store refused a value ({type(e).__name__}: {str(e)[:300]})")
        raise typer.Exit(1) from e
    run = store.runs.get(run_id)
    assert run is not None
    dropped = (store.events.first_data(run_id, IMPORT_EVENT) or {}).get("dropped") or []
    if dropped:  # an exported spec's fields that only this server's operator sets
        err.print(
            f"not stored from the log's spec (the operator's to set): {', '.join(dropped)}",
            markup=False,
            soft_wrap=True,
        )
    if as_json:
        sys.stdout.write(json.dumps(run_out(run, imported=True).model_dump(mode="json")) + "\n")
        return
    n = len(store.episodes.of_run(run_id, with_answer=False))
    err.print(
        f"imported {log} as run {run_id} ({run.status}, {n} episodes); it is marked imported: "
        "its scores are the log's claims",
        markup=False,
        soft_wrap=True,
    )
    err.print(f"report: harness report {run_id}", markup=False, soft_wrap=True)
    sys.stdout.write(run_id + "\n")


def _refused(log: str, why: str) -> None:
    err.print(
        f"cannot import {log}: {why}; nothing imported", style="red", markup=False, soft_wrap=True
    )


def register(app: typer.Typer) -> None:
    app.command("import-inspect")(import_inspect)
