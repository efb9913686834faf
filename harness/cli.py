"""The `harness` command. Each area adds its commands from its own module in harness.commands."""

from __future__ import annotations

import importlib

import typer

from harness.commands import COMMAND_MODULES

# Tracebacks never print locals: they could hold ground truth.
app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Evaluate automated-interpretability agents on FIND and more.",
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"harness.commands.{_name}").register(app)


def main() -> None:
    from harness.store.engine import StoreUnavailable

    try:
        app()
    except StoreUnavailable as e:  # a setup problem, not a bug: no traceback
        typer.echo(f"harness: {e}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
