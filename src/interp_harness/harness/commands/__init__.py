"""CLI command groups: every module here defines `register(app: typer.Typer) -> None`."""

import pkgutil

COMMAND_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")
)


def family_help() -> str:
    """`--family` help: the families a dataset of several serves (a dataset whose ids decide the
    family, a record's `fixed_datasets`, takes no --family)."""
    from interp_harness.function_store.benchmark import benchmarks

    return " | ".join(b.family for b in benchmarks() if not b.fixed_datasets)
