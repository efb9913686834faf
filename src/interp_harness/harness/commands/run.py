"""`harness run`: one run in this process, with a progress bar, then the summary table."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

err = Console(stderr=True)


def _options(pairs: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"agent option {p!r} is not KEY=VALUE")
        try:
            out[key] = json.loads(value)  # numbers, booleans, JSON lists
        except json.JSONDecodeError:
            out[key] = value
    return out


@contextlib.contextmanager
def _stdout_is_stderr(active: bool) -> Iterator[None]:
    """With --json, stdout carries the JSON only: what libraries print meanwhile (Ray's core
    writes to file descriptor 1 directly) goes to stderr."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(
    agent: str = typer.Option(
        ..., "--agent", "-a", help="agent name, pkg.mod:Class or entry point"
    ),
    dataset: str = typer.Option(..., "--dataset", "-d", help="find-v1 | find-gen | find-import"),
    family: str = typer.Option(
        None, "--family", "-f", help="benchmark family (a registered family's name)"
    ),
    variant: str = typer.Option(None, "--variant", help="e.g. clean | noised | corrupted | mlp"),
    ids: list[str] = typer.Option(None, "--id", help="explicit target id (repeatable)"),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="at most N targets"),
    seed: int = typer.Option(None, "--seed", help="sample the N targets with this seed"),
    gen_seed: int = typer.Option(0, "--gen-seed", help="find-gen generator seed"),
    mode: str = typer.Option(
        "default",
        "--mode",
        help="protocol: default | find-compat | tools | code | code-tools (docs/code-mode.md)",
    ),
    method: str = typer.Option(
        "interactive", "--method", help="interactive | exemplars | single_round"
    ),
    max_rounds: int = typer.Option(20, "--max-rounds", help="assistant messages per episode"),
    max_target_calls: int = typer.Option(None, "--max-target-calls"),
    max_inputs: int = typer.Option(
        None,
        "--max-inputs",
        help="inputs per episode over all its target calls; the floor runs sample as many",
    ),
    max_tokens: int = typer.Option(None, "--max-tokens"),
    max_wall_s: float = typer.Option(None, "--max-wall-s"),
    agent_option: list[str] = typer.Option(None, "--agent-option", "-o", help="KEY=VALUE"),
    epochs: int = typer.Option(
        1, "--epochs", help="episodes per target (1-20): repeated samples of a stochastic agent"
    ),
    epoch_reducer: str = typer.Option(
        "mean",
        "--epoch-reducer",
        help="how the report reduces a target's epochs: mean | max | at_least_one",
    ),
    as_json: bool = typer.Option(False, "--json", help="machine-readable summary on stdout"),
    no_floor: bool = typer.Option(
        False,
        "--no-floor",
        help="do not also run the floor agents (e.g. `interpolation`) that the selected "
        "targets' benchmarks name, on those targets",
    ),
    agent_isolation: str = typer.Option(
        None,
        "--agent-isolation",
        help="bwrap (default: each episode's agent in a sandboxed agent host) | none (development "
        "only: the agent runs in this process and can read hidden targets; recorded on the run)",
    ),
    no_preflight: bool = typer.Option(
        False,
        "--no-preflight",
        help="store the run without checking first that its agent, key, endpoints and targets "
        "work (harness/runs/preflight.py)",
    ),
    executor: str = typer.Option(
        None,
        "--executor",
        help="local (default: episodes in this process) | ray (Ray tasks on the cluster at "
        "HARNESS_RAY_ADDRESS; needs a PostgreSQL store; docs/scale-out.md)",
    ),
    mcp_host: str = typer.Option(
        "127.0.0.1",
        "--mcp-host",
        help="agent `external`: the address its MCP server binds (loopback by default)",
    ),
    mcp_port: int = typer.Option(
        0, "--mcp-port", min=0, max=65535, help="agent `external`: its MCP port (0: any free one)"
    ),
    mcp_endpoints: str = typer.Option(
        None,
        "--mcp-endpoints",
        help="agent `external`: also write the episodes' endpoints and tokens to this file "
        "(JSON, mode 0600)",
    ),
) -> None:
    """Run AGENT on a target selection in this process and print the summary."""
    from pydantic import ValidationError

    from interp_harness.harness.domain.spec import RunSpec

    try:
        spec = RunSpec.model_validate(
            {
                "agent": agent,
                "agent_options": _options(agent_option or []),
                "dataset": dataset,
                "family": family,
                "variant": variant,
                "ids": ids or None,
                "limit": limit,
                "seed": seed,
                "gen_seed": gen_seed,
                "protocol": {"mode": mode, "method": method},
                "budgets": {
                    "max_rounds": max_rounds,
                    "max_target_calls": max_target_calls,
                    "max_inputs": max_inputs,
                    "max_tokens": max_tokens,
                    "max_wall_s": max_wall_s,
                },
                "floor": not no_floor,
                "epochs": epochs,
                "epoch_reducer": epoch_reducer,
            }
        )
    except ValidationError as e:
        for x in e.errors():
            err.print(f"[red]{'.'.join(map(str, x['loc']))}: {x['msg']}[/red]")
        raise typer.Exit(2) from e
    if agent_isolation not in (None, "bwrap", "none"):
        raise typer.BadParameter("--agent-isolation must be bwrap or none")
    if executor not in (None, "local", "ray"):
        raise typer.BadParameter("--executor must be local or ray")
    run_and_report(
        execute_here(
            spec,
            quiet=as_json,
            agent_isolation=agent_isolation,
            preflight=not no_preflight,
            executor=executor,
            mcp=(mcp_host, mcp_port, mcp_endpoints),
        ),
        as_json,
    )


def run_and_report(work, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Run `execute_here(...)` and print its summary (JSON with --json); exit 1 when the run failed."""
    with _stdout_is_stderr(as_json):
        detail, floor = asyncio.run(work)
    if as_json:
        # the run's detail; floor_run_id names its floor run, whose detail is under "floor"
        out = detail.model_dump(mode="json") | {
            "floor": floor.model_dump(mode="json") if floor else None
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        console = Console()
        print_summary(console, detail)
        if floor is not None:
            console.print(f"[bold]{floor.agent} floor[/bold] (its benchmark's targets):")
            print_summary(console, floor)
    if detail.status == "failed":
        raise typer.Exit(1)


async def execute_here(  # type: ignore[no-untyped-def]
    spec,
    quiet: bool,
    agent_isolation: str | None = None,
    preflight: bool = True,
    executor: str | None = None,
    mcp: tuple[str, int, str | None] = ("127.0.0.1", 0, None),
    resume: str | None = None,
):
    """Store the run `spec` describes and execute it here; or (`resume`, a run id) execute a
    stored run whose lease is free (its unfinished episodes)."""
    from interp_harness.harness.commands._progress import follow, make_progress
    from interp_harness.harness.commands._table import stderr
    from interp_harness.harness.domain.spec import RunSpec, episode_total
    from interp_harness.harness.executors import ExecutorConfigError, make_executor
    from interp_harness.harness.runs.admission import admit
    from interp_harness.harness.runs.leases import new_owner_id
    from interp_harness.harness.runs.plan import store_plan
    from interp_harness.harness.runs.preflight import PreflightError
    from interp_harness.harness.runs.selection import SelectionError
    from interp_harness.harness.runs.views import run_detail
    from interp_harness.harness.services import build_services
    from interp_harness.harness.settings import Settings

    settings = Settings(
        **({"agent_isolation": agent_isolation} if agent_isolation else {}),
        **({"executor": executor} if executor else {}),
    )
    if settings.agent_isolation == "none":
        err.print(
            "[bold red]WARNING: agent isolation is OFF: the agent runs in this process and can "
            "read every target's hidden truth. Scores from this run are not comparable; the run "
            "records it (event agent_isolation).[/bold red]"
        )
    try:
        remote = make_executor(settings)
        if remote is not None:
            await asyncio.to_thread(remote.connect)
    except ExecutorConfigError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e
    # the run is stored already claimed by this process: a server sharing the store leaves it
    # alone while this process renews its lease (and takes it over if this process dies)
    owner = new_owner_id()
    svc = None
    try:
        svc = build_services(settings, executor=remote, owner=owner)
        if resume is None:
            plan = admit(spec, settings, svc.catalogs, preflight=preflight)
            run = store_plan(svc.store, plan, owner=owner, lease_s=settings.run_lease_s)
            agent_cls = plan.agent_cls
        else:
            plan, (run, agent_cls) = None, resumable(svc.store, resume, owner)
            spec = RunSpec.model_validate(run.spec)
        floor = svc.store.runs.floor(run.id)
    except PreflightError as e:
        await _close(svc)
        err.print("[red]the run cannot work, so it was not stored:[/red]")
        for problem in e.problems:
            err.print(f"  [red]{escape(problem)}[/red]", soft_wrap=True)
        if e.checked:  # what --no-preflight would skip; a bad request stays refused
            err.print("(`--no-preflight` skips the pre-flight checks)")
        raise typer.Exit(2) from e
    except (SelectionError, RuntimeError) as e:
        await _close(svc)
        err.print(f"[red]{escape(str(e))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from e
    store, sched = svc.store, svc.scheduler
    sched.only_runs = {run.id} | ({floor.id} if floor else set())
    epochs = f" x {spec.epochs} epochs ({spec.epoch_reducer})" if spec.epochs > 1 else ""
    err.print(
        f"run [bold]{run.id}[/bold]: {len(run.target_ids)} targets{epochs}, agent {spec.agent}"
    )
    if floor is not None:
        err.print(
            f"floor run [bold]{floor.id}[/bold]: {len(floor.target_ids)} targets, "
            f"agent {floor.agent}"
        )
    runs = [run] + ([floor] if floor else [])
    mcp_server = await _serve_mcp(store, run, agent_cls, plan, *mcp, settings)
    sched.start()
    totals = [episode_total(r.spec, r.target_ids) for r in runs]
    labels = ["episodes", "floor episodes"][: len(runs)]
    try:
        bars = make_progress(stderr(), labels, totals, quiet)
        await follow(store, sched, runs, bars, labels, totals)
    except (KeyboardInterrupt, asyncio.CancelledError):
        ids = " and ".join(r.id for r in runs)
        err.print(f"interrupted: run {ids} stays resumable (`harness serve` picks it up)")
        raise
    finally:
        await svc.aclose(dispose=False)
        if mcp_server is not None:
            await mcp_server.stop()
    floor_detail = run_detail(store, store.runs.get(floor.id)) if floor else None
    return run_detail(store, store.runs.get(run.id)), floor_detail


async def _serve_mcp(  # type: ignore[no-untyped-def]
    store, run, agent_cls: type, plan, host: str, port: int, path: str | None, settings
):
    """For an agent that meets its client over MCP (`external`): its server in this process, and
    each unfinished episode's endpoint and token on stderr (its client needs them while the run
    waits). `plan`: a new run's, whose episodes are stored here first."""
    if not getattr(agent_cls, "runs_in_orchestrator", False):
        return None
    from interp_harness.harness.mcp.server import (
        LOOPBACK,
        McpApp,
        McpServer,
        issue_endpoints,
        store_episodes_now,
    )

    if plan is not None:
        store_episodes_now(store, run, plan)
    from interp_harness.harness.rate_limit import FailureBudget

    app = McpApp(
        rebinding_protection=host in LOOPBACK,
        max_message_chars=settings.agent_max_message_chars,
        failures=FailureBudget(settings.auth_max_failures, settings.auth_failure_window_s),
    )
    server = McpServer(app, host, port)
    await server.start()
    err.print(f"MCP server at {server.base_url}/<episode> (one endpoint and token per episode):")
    endpoints = issue_endpoints(store, run.id, server.base_url)
    for e in endpoints:
        err.print(f"  target {escape(e.target_id)}  {e.url}  token {e.token}", soft_wrap=True)
    if path is not None:  # the tokens are secrets: only the operator may read the file
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump([e.model_dump() for e in endpoints], f, indent=2)
    return server


def resumable(store, run_id: str, owner: str) -> tuple[Any, type]:  # type: ignore[no-untyped-def]
    """The stored run `run_id` and its agent class, when this process may execute it now
    (SelectionError otherwise)."""
    from interp_harness.harness.domain.agent_class import planned_agent_class
    from interp_harness.harness.domain.spec import RunSpec
    from interp_harness.harness.runs.leases import lease_free
    from interp_harness.harness.runs.plan import stored_agent_path
    from interp_harness.harness.runs.selection import SelectionError
    from interp_harness.harness.store import RUN_TERMINAL

    run = store.runs.get(run_id)
    if run is None:
        raise SelectionError(f"no run with id {run_id!r}")
    if run.status in RUN_TERMINAL:
        raise SelectionError(f"run {run_id} has ended ({run.status})")
    if not lease_free(run, owner):
        raise SelectionError(
            f"run {run_id} is executed by another process (its lease runs until "
            f"{run.lease_expires_at}); stop that one first"
        )
    agent_cls = planned_agent_class(
        RunSpec.model_validate(run.spec), stored_agent_path(store, run_id)
    )
    return run, agent_cls


async def _close(svc) -> None:  # type: ignore[no-untyped-def]
    """Stop what `build_services` made when the run is refused before it starts."""
    if svc is not None:
        await svc.aclose(dispose=False)


def print_summary(console: Console, detail, full_errors: bool = False) -> None:  # type: ignore[no-untyped-def]
    """The run's facts and errors, each error by its cause (the full text with `full_errors`)."""
    console.print(
        f"run [bold]{detail.id}[/bold]  status [bold]{detail.status}[/bold]  agent {detail.agent}  "
        f"dataset {detail.dataset}" + (f"/{detail.family}" if detail.family else "")
    )
    t = Table("episodes", "count")
    for status, n in sorted(detail.progress.by_status.items()):
        t.add_row(status, str(n))
    for cat, n in sorted(detail.errors_by_category.items()):
        t.add_row(f"  error: {cat}", str(n))
    console.print(t)
    if detail.metrics:
        m = Table("metric", "mean", "n", "errors (not scored as 0)")
        for s in detail.metrics:
            m.add_row(
                s.metric, "-" if s.mean is None else f"{s.mean:.3f}", str(s.n), str(s.n_errors)
            )
        console.print(m)
    u = detail.usage
    console.print(
        f"rounds {u.rounds}  target calls {u.target_calls} ({u.inputs} inputs)  tokens "
        f"{u.prompt_tokens}+{u.completion_tokens}  cost ${u.cost_usd:.4f}"
    )
    if detail.errors:
        console.print("[bold]errors[/bold] (not scored; left out of the means):")
        for g in detail.errors:
            console.print(f"  [red]{escape(g.line())}[/red]")
        example = detail.errors[0].example_episode
        console.print(f"  (in full, with the agent's traceback: harness runs show {example})")
    if detail.error:
        said = detail.error_cause or detail.error
        console.print(f"[red]{escape(detail.error if full_errors else said)}[/red]")
        if not full_errors and said != detail.error:
            console.print(f"  (in full: harness runs show {detail.id} --full-errors)")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
