"""Ids as the CLI takes them: a whole id or any unique prefix of one (tables and messages show
ids whole, but people type the first few characters, or paste one a narrow terminal cut)."""

from __future__ import annotations

import typer
from rich.console import Console

from interp_harness.harness.store.models import Episode, Run
from interp_harness.harness.store.repo import Store

err = Console(stderr=True)
# how many candidates an ambiguous prefix lists
SHOWN = 10


def cli_store() -> Store:
    """The store the operator's settings name (DATABASE_URL / HARNESS_HOME)."""
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store import make_engine

    return Store(make_engine(Settings().url))


def resolve_id(store: Store, kind: str, typed: str) -> str:
    """The one id of `kind` ("run" | "episode") that is `typed` or starts with it; exits with
    status 2 and a message listing the candidates when there is none or more than one."""
    prefix = typed.strip().rstrip("…").rstrip(".")  # a pasted id that a table cut
    ids = {"run": store.runs, "episode": store.episodes}[kind]
    matches = ids.ids_starting(prefix, limit=SHOWN + 1) if prefix else []
    if typed in matches:
        return typed
    if len(matches) == 1:
        return matches[0]
    if not matches:
        err.print(f"[red]no {kind} with id {typed!r}; see `harness runs list`[/red]")
        raise typer.Exit(2)
    more = " (and more)" if len(matches) > SHOWN else ""
    err.print(
        f"[red]{typed!r} is the start of several {kind} ids{more}; type more of it:[/red]\n  "
        + "\n  ".join(matches[:SHOWN])
    )
    raise typer.Exit(2)


def run_or_exit(store: Store, typed: str) -> Run:
    """The run that `typed` names (an id or a unique prefix of one)."""
    run = store.runs.get(resolve_id(store, "run", typed))
    assert run is not None  # resolved from the store just now; runs are never deleted
    return run


def episode_or_exit(store: Store, typed: str) -> Episode:
    """The episode that `typed` names (an id or a unique prefix of one)."""
    ep = store.episodes.get(resolve_id(store, "episode", typed))
    assert ep is not None
    return ep
