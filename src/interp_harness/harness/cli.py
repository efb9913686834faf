"""The `harness` command. Each area adds its commands from its own module in interp_harness.harness.commands;
each benchmark adds the subcommands its record names (`cli`: name -> `module:typer_app`)."""

from __future__ import annotations

from interp_harness.model_services.backbone.omp_spin import limit_omp_spin

# Before any command's module loads torch: libgomp's threads then sleep soon at a barrier
# instead of spinning through the time slices other processes on the cores need (`harness sae
# build`, `intervention serve`, the families' commands; the backbone's server sets it too).
limit_omp_spin()

import importlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Mapping  # noqa: E402
from pathlib import Path  # noqa: E402

import typer  # noqa: E402

from interp_harness.function_store.benchmark import benchmarks, load_ref  # noqa: E402
from interp_harness.harness.commands import COMMAND_MODULES  # noqa: E402

# Tracebacks never print locals: they could hold ground truth.
app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Evaluate automated-interpretability agents on FIND and more.",
)


def _benchmark_group(name: str, ref: str) -> Callable[[typer.Typer], None]:
    def register(parent: typer.Typer) -> None:
        parent.add_typer(load_ref(ref), name=name)

    return register


def command_groups() -> list[tuple[str, Callable[[typer.Typer], None]]]:
    """(name, register) of every command module and benchmark subcommand, by name: the order
    `harness --help` lists groups in."""
    groups = [
        (m, importlib.import_module(f"interp_harness.harness.commands.{m}").register)
        for m in COMMAND_MODULES
    ]
    for record in benchmarks():
        groups += [(name, _benchmark_group(name, ref)) for name, ref in record.cli.items()]
    return sorted(groups, key=lambda g: g[0])


for _name, _register in command_groups():
    _register(app)


def foreign_venv_note(environ: Mapping[str, str] = os.environ) -> str | None:
    """A note when a virtual environment is active that this harness does not run in: plugins
    installed only there (benchmarks, agents) are invisible to this process, and nothing else
    would say why a family is missing."""
    venv = environ.get("VIRTUAL_ENV")
    if not venv or Path(venv).resolve() == Path(sys.prefix).resolve():
        return None
    return (
        f"harness: note: this harness runs in {sys.prefix}, not in the active virtual "
        f"environment {venv}; plugins installed only there are not loaded. Run "
        f"`{venv}/bin/python -m interp_harness ...`, or install interp-harness into it "
        "for its own `harness`."
    )


def main() -> None:
    if note := foreign_venv_note():
        typer.echo(note, err=True)
    try:
        app()
    except Exception as e:
        # a command that never opened the store (`agents list`) never loads it (SQLAlchemy):
        # only a loaded store module can have raised its StoreUnavailable
        engine = sys.modules.get("interp_harness.harness.store.engine")
        if engine is None or not isinstance(e, engine.StoreUnavailable):
            raise
        typer.echo(f"harness: {e}", err=True)  # a setup problem, not a bug: no traceback
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
