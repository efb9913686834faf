"""`harness images build` (the compose stack's CPU images, offline) and `harness sandbox daemon`
(what the stack's `targets` and `sandbox` containers run)."""

from __future__ import annotations

import typer
from rich.console import Console

err = Console(stderr=True)
images_app = typer.Typer(no_args_is_help=True, help="Images of the compose stack (compose.yaml).")
sandbox_app = typer.Typer(no_args_is_help=True, help="The compose stack's sandbox daemon.")


@images_app.command("build")
def build(
    profile: str = typer.Option("cpu", help="only 'cpu': GPU images build where their base pulls"),
) -> None:
    """Build (or reuse, by content digest) every CPU image and tag it interp-harness/<svc>:local."""
    import time

    from interp_harness.harness.sandbox.compose_images import build_cpu_images
    from interp_harness.harness.sandbox.docker_engine import EngineUnavailable, ensure_engine

    if profile != "cpu":
        err.print(
            "[red]only --profile cpu builds here; GPU images: `docker compose --profile gpu build`[/red]"
        )
        raise typer.Exit(2)
    try:
        client = ensure_engine()
    except EngineUnavailable as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    t0 = time.monotonic()
    build_cpu_images(client, lambda what, tag, s: err.print(f"{what:>13}  {tag}  {s:6.1f} s"))
    err.print(f"all CPU images ready in {time.monotonic() - t0:.1f} s (tag :local)")


@sandbox_app.command("daemon")
def daemon(socket: str = typer.Option(..., help="Unix socket to listen on")) -> None:
    """Run commands and target services in THIS container (the container is the sandbox)."""
    from interp_harness.harness.sandbox.daemon import serve

    serve(socket)


def register(app: typer.Typer) -> None:
    app.add_typer(images_app, name="images")
    app.add_typer(sandbox_app, name="sandbox")
