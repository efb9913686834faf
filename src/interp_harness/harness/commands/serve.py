"""`harness serve` (REST API + scheduler) and `harness db upgrade|current`."""

from __future__ import annotations

import typer
from rich.console import Console

console = Console(stderr=True)
db_app = typer.Typer(no_args_is_help=True, help="The SQL store (SQLite by default, DATABASE_URL).")


def serve(
    host: str = typer.Option("127.0.0.1", help="address to listen on"),
    port: int = typer.Option(8000, help="TCP port"),
    log_level: str = typer.Option("info", help="uvicorn log level"),
    executor: str = typer.Option(
        None, "--executor", help="local (default) | ray (HARNESS_EXECUTOR; docs/scale-out.md)"
    ),
) -> None:
    """Run the API and the scheduler (embedded default: SQLite + bwrap + local target services)."""
    from interp_harness.harness.commands._ports import exit_if_port_taken

    exit_if_port_taken(host, port, console)
    import uvicorn

    from interp_harness.harness.api import create_app
    from interp_harness.harness.executors import ExecutorConfigError, make_executor
    from interp_harness.harness.settings import Settings

    if executor not in (None, "local", "ray"):
        raise typer.BadParameter("--executor must be local or ray")
    settings = Settings(**({"executor": executor} if executor else {}))
    try:
        make_executor(settings)  # refuses a configuration it cannot run with, before serving
    except ExecutorConfigError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e
    if settings.sandbox == "inprocess":
        console.print(
            "[bold yellow]HARNESS_SANDBOX=inprocess: targets run UNSANDBOXED in this process "
            "(tests only)[/bold yellow]"
        )
    console.print(
        f"database: {_redact(settings.url)}  sandbox: {settings.sandbox}  "
        f"executor: {settings.executor}"
    )
    from interp_harness.harness.store import make_engine

    make_engine(settings.url).dispose()  # a database that cannot be opened: say so before starting
    # forwarded headers only from the proxies the operator named (uvicorn's default trusts
    # 127.0.0.1, which any local process can be)
    proxies = settings.trusted_proxies.strip()
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
    )


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@db_app.command("upgrade")
def upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply schema migrations (the server also does this at start)."""
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store import current_revision, make_engine, upgrade_schema

    settings = Settings()
    engine = make_engine(settings.url, upgrade=False)
    upgrade_schema(engine, revision)
    console.print(f"{_redact(settings.url)} is at revision {current_revision(engine)}")


@db_app.command("current")
def current() -> None:
    """Print the schema revision of the configured database."""
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store import current_revision, make_engine

    settings = Settings()
    print(current_revision(make_engine(settings.url, upgrade=False)))


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(db_app, name="db")
