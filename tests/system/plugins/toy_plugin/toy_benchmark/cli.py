"""`harness toy moods`: the toy family's own subcommand."""

import typer

from toy_benchmark.targets import MOODS

toy_app = typer.Typer(no_args_is_help=True, help="Toy: a benchmark family from a plugin package.")


@toy_app.command("moods")
def moods() -> None:
    """Print the moods of the toy targets."""
    typer.echo(" ".join(MOODS))
