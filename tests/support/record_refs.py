"""A Benchmark record's `module:attr` references, resolved and checked against the layers.

Each kind of reference is imported by one layer (sources, runners and reference data by the
targets; the prompt by the orchestrator; the scorer and panels by the evaluator; CLI subcommands
by the orchestrator's CLI): a reference must resolve to the kind of object that layer expects,
and, when it is ours, live in a layer that one may import (layering.ALLOWED)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from interp_harness.evaluator.panel import Panel
from interp_harness.evaluator.scorer import Scorer
from interp_harness.function_store.benchmark import Benchmark, load_ref
from support.layering import ALLOWED, layer_of


def _is_scorer(obj: Any) -> bool:
    return isinstance(obj, Scorer) or (isinstance(obj, type) and issubclass(obj, Scorer))


def _is_typer(obj: Any) -> bool:
    import typer

    return isinstance(obj, typer.Typer)


# kind -> (the layer that imports it, what the object must be)
KINDS: Mapping[str, tuple[str, Callable[[Any], bool]]] = {
    "source": ("function_store", callable),
    "runner": ("function_store", lambda m: hasattr(m, "__file__")),
    "reference_data": ("function_store", lambda m: hasattr(m, "__file__")),
    "prompt": ("harness", lambda p: isinstance(p, Mapping) and bool(p)),
    "scorer": ("evaluator", _is_scorer),
    "panel": ("evaluator", lambda p: isinstance(p, Panel)),
    "cli": ("harness", _is_typer),
}


def references(record: Benchmark) -> list[tuple[str, str]]:
    """(kind, reference) for every reference in the record."""
    out = [("source", r) for r in record.sources.values()]
    out += [("runner", r) for r in record.runners.values()]
    out += [("reference_data", r) for r in record.reference_data]
    out += [("prompt", record.prompt)] if record.prompt else []
    out += [("scorer", record.scorer)] if record.scorer else []
    out += [("panel", r) for r in record.panels]
    out += [("cli", r) for r in record.cli.values()]
    return out


def problems(record: Benchmark) -> list[str]:
    """What is wrong with the record's references (empty when each resolves and is layered)."""
    out = []
    for kind, ref in references(record):
        user, expected = KINDS[kind]
        module = ref.partition(":")[0]
        owner = layer_of(module)
        if owner is not None and owner != user and owner not in ALLOWED[user]:
            out.append(f"{record.family}: {kind} {ref} is in {owner}, which {user} may not import")
            continue
        try:
            obj = load_ref(ref)
        except (ImportError, AttributeError) as e:
            out.append(f"{record.family}: {kind} {ref} does not resolve ({e})")
            continue
        if not expected(obj):
            out.append(f"{record.family}: {kind} {ref} is a {type(obj).__name__}")
    return out
