"""CLI command groups: every module here defines `register(app: typer.Typer) -> None`."""

import pkgutil

COMMAND_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")
)
