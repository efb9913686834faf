"""`harness runs list|show|cancel`, `harness export RUN --format jsonl` (`harness report`:
harness/commands/report.py)."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from interp_harness.harness.commands._table import Col, fitted, print_table, stdout

console = Console()
err = Console(stderr=True)
LIST_COLUMNS = (
    Col("id", "id"),
    Col("status", "id"),
    Col("agent", "text"),
    Col("dataset", "id", move=3),
    Col("targets", "id", "right", move=2),
    Col("created (UTC)", "text", move=1),
)
runs_app = typer.Typer(no_args_is_help=True, help="Stored runs: list, show, cancel.")


def _store():  # type: ignore[no-untyped-def]
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store

    return Store(make_engine(Settings().url))


def _run_or_exit(store, run_id: str):  # type: ignore[no-untyped-def]
    """The run that `run_id` names: a whole id or any unique prefix of one."""
    from interp_harness.harness.commands._ids import run_or_exit

    return run_or_exit(store, run_id)


@runs_app.command("list")
def list_(
    status: str = typer.Option(None, help="queued | running | completed | failed | cancelled"),
    limit: int = typer.Option(50, min=1),
    as_json: bool = typer.Option(False, "--json", help="one JSON object per line"),
) -> None:
    """List runs, newest first."""
    from interp_harness.harness.runs.views import run_out

    store = _store()
    runs = store.runs.latest(status=status, limit=limit)
    imported = store.events.imported_runs([r.id for r in runs])
    if as_json:
        for r in runs:
            sys.stdout.write(run_out(r, r.id in imported).model_dump_json() + "\n")
        return
    # ids and agent names are never cut (they are typed back); what does not fit moves under
    rows = [
        [
            r.id,
            r.status,
            r.agent
            + (f" (floor of {r.spec['floor_for']})" if r.spec.get("floor_for") else "")
            + (" (imported)" if r.id in imported else ""),
            r.dataset + (f"/{r.family}" if r.family else ""),
            str(len(r.target_ids)),
            r.created_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for r in runs
    ]
    out = stdout()
    print_table(out, fitted(LIST_COLUMNS, rows, out.width))


@runs_app.command("show")
def show(
    run_id: str,
    as_json: bool = typer.Option(False, "--json"),
    full_errors: bool = typer.Option(
        False, "--full-errors", help="errors in full (by default each shows its cause)"
    ),
) -> None:
    """A run's status, progress, usage and score summary, with its episodes; or, given an
    episode's id, that episode with its error and the agent's traceback. Errors lead with their
    cause (the exception and its message); --full-errors prints their whole text."""
    from interp_harness.evaluator.error_text import cause
    from interp_harness.harness.commands.run import print_summary
    from interp_harness.harness.domain.spec import episode_epoch, spec_epochs
    from interp_harness.harness.runs.views import IMPORTED, run_detail

    store = _store()
    prefix = run_id.strip().rstrip("…").rstrip(".")
    if (
        prefix
        and not store.runs.ids_starting(prefix, limit=1)
        and store.episodes.ids_starting(prefix, limit=1)
    ):
        from interp_harness.harness.commands._episode import show_episode
        from interp_harness.harness.commands._ids import episode_or_exit

        ep = episode_or_exit(store, run_id)
        return show_episode(stdout(), store, ep, as_json, full_errors=full_errors)
    run = _run_or_exit(store, run_id)
    detail = run_detail(store, run)
    if as_json:
        sys.stdout.write(detail.model_dump_json(indent=2) + "\n")
        return
    out = stdout()
    print_summary(out, detail, full_errors=full_errors)
    if detail.imported:
        out.print(f"[yellow]note: {IMPORTED}[/yellow]")
    # repeated samples: an epoch column (a run with one epoch per target shows none)
    n_targets, epochs = len(run.target_ids), spec_epochs(run.spec)
    episodes = store.episodes.of_run(run.id, with_answer=False)
    scores = _headline_scores(store, run.id, {e.id: e.family for e in episodes})
    # one headline metric (a run of one family): named once, under the table
    metrics = {s.metric for s in scores.values()}  # type: ignore[attr-defined]
    metric = metrics.pop() if len(metrics) == 1 else None
    rows = []
    for e in episodes:
        reason = e.end_reason or ""
        if e.error_category:
            reason += f" ({e.error_category})"
        msg = (cause(e.error) or "")[:200]  # the cause; --full-errors prints the text
        rows.append(
            [
                e.id,
                e.target_id,
                *([str(episode_epoch(e.idx, n_targets))] if epochs > 1 else []),
                _status_cell(e.status, reason),
                _score_cell(scores.get(e.id), named=metric is not None),
                f"{e.rounds}/{e.target_calls}",
                msg,
            ]
        )
    cols = (
        Col("episode", "id"),
        Col("target", "id"),
        *([Col("epoch", "id", "right")] if epochs > 1 else []),
        Col("status", "text"),
        Col("score", "text"),
        Col("rounds/calls", "id", "right", move=2),
        Col("error", "text", move=1, comfortable=30),
    )
    print_table(out, fitted(cols, rows, out.width))
    if metric is not None:
        out.print(f"score: {metric}, the headline metric of the run's family", highlight=False)
    failed = [e for e in episodes if e.error]
    if full_errors:
        for e in failed:
            out.print(f"[bold]error of episode {e.id}[/bold] ({e.error_category})")
            out.print(e.error, markup=False, highlight=False, soft_wrap=True)
    elif any(cause(e.error) != e.error for e in failed):
        out.print(f"errors in full: harness runs show {run.id} --full-errors", highlight=False)


def _status_cell(status: str, reason: str) -> str:
    """`status: end reason (error category)`, the status alone where the reason repeats it."""
    if not reason or reason == status:
        return status
    if reason.startswith(f"{status} ("):  # error (infrastructure)
        return reason
    return f"{status}: {reason}"


def _headline_scores(store, run_id: str, eps: dict[str, str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Each episode's (id -> family in `eps`) score on its family's headline metric, the score
    the web run page shows."""
    from interp_harness.harness.web.views import headline_metrics

    headline = headline_metrics()
    return {
        s.episode_id: s
        for s in store.scores.of_run(run_id)
        if s.metric == headline.get(eps.get(s.episode_id, ""))
    }


def _score_cell(score, named: bool = False) -> str:  # type: ignore[no-untyped-def]
    """`metric value` (the value alone when the column's header `named` the metric), or the
    score's error category (errors are states, never a 0)."""
    if score is None:
        return "-"
    metric = "" if named else f"{score.metric} "
    if score.status != "ok":
        return f"{metric}error ({score.error_category or score.status})"
    value = "-" if score.value is None else f"{score.value:.3g}"
    return f"{metric}{value}"


@runs_app.command("cancel")
def cancel(
    run_id: str,
    wait_s: float = typer.Option(
        None,
        "--wait-s",
        min=0,
        help="how long to wait for its episodes to end (default: the run lease, "
        "HARNESS_RUN_LEASE_S, plus 5 s)",
    ),
) -> None:
    """Cancel a run (and its floor run): its queued and running episodes end as cancelled.

    Episodes the run's owner (a server, or the `harness run` that stored it) is running end
    there when it sees the cancel in the store; this command waits for that. Those of an owner
    that died meanwhile are ended here once its lease has run out."""
    import time

    from interp_harness.harness.settings import Settings

    store = _store()
    run = _run_or_exit(store, run_id)
    run_id = run.id
    if not store.runs.cancel(run_id):
        err.print(f"[red]run {run_id} has already ended ({run.status})[/red]")
        raise typer.Exit(1)
    console.print(f"run {run_id} cancelled")
    runs = [run_id]
    floor = store.runs.floor(run_id)
    if floor is not None and store.runs.cancel(floor.id):
        console.print(f"its floor run {floor.id} cancelled")
        runs.append(floor.id)
    deadline = time.monotonic() + (Settings().run_lease_s + 5 if wait_s is None else wait_s)
    while True:
        store.runs.sweep_cancelled(runs)
        left = sum(len(store.episodes.of_run(r, status=("queued", "running"))) for r in runs)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if left:
        err.print(
            f"[yellow]{left} episodes are still running in the run's owner; they end as "
            "cancelled when it sees the cancel (or when its lease runs out)[/yellow]"
        )


def export(
    run_id: str,
    fmt: str = typer.Option(
        "jsonl",
        "--format",
        help="jsonl: one episode transcript per line; inspect: an Inspect AI eval log "
        "(.eval, Inspect's default; .json when the output ends in .json; JSON with -o -; open "
        "it with `inspect view`, read it back with `harness import-inspect`)",
    ),
    output: str = typer.Option(
        None,
        "--output",
        "-o",
        help="file, or - for stdout (default: stdout for jsonl, RUN_ID.eval for inspect)",
    ),
) -> None:
    """Export a run's episodes with their full transcripts, target calls and scores."""
    from interp_harness.harness.runs.views import IMPORTED, episode_detail

    if fmt not in ("jsonl", "inspect"):
        err.print(f"[red]unknown format {fmt!r}; supported: jsonl, inspect[/red]")
        raise typer.Exit(2)
    store = _store()
    run = _run_or_exit(store, run_id)
    # the export carries the mark too (Inspect: its metadata)
    if store.events.imported_runs([run.id]):
        err.print(f"note: {IMPORTED}", markup=False, soft_wrap=True)
    if fmt == "inspect":
        from interp_harness.harness.inspect_tasks.export import (
            InspectUnavailable,
            write_inspect_json,
            write_inspect_log,
        )

        output = output or f"{run.id}.eval"

        try:
            if output == "-":  # a pipe takes text: Inspect's JSON log format
                write_inspect_json(store, run, sys.stdout.buffer)
                sys.stdout.flush()
                return
            path = write_inspect_log(store, run, output)
        except InspectUnavailable as e:
            err.print(f"[red]{e}[/red]")
            raise typer.Exit(2) from e
        n = len(store.episodes.of_run(run.id))
        err.print(f"wrote {path} ({n} samples); view: inspect view")
        return
    out = sys.stdout if output in (None, "-") else open(output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for ep in store.episodes.of_run(run.id):
            detail = episode_detail(store, ep)
            out.write(detail.model_dump_json() + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
    app.command("export")(export)
