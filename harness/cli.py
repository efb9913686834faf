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
    app()


if __name__ == "__main__":
    main()
