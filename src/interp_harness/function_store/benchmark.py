"""Benchmark units: one registered record per target family, and the registry generic code loops over.

A benchmark family (FIND numeric, strings, entities, relations; neurons; RAVEL; a plugin's) is one
`Benchmark` record that names everything about it. Records are found through the entry-point group
`interp_harness.benchmarks` (value: `module:RECORD`) and through `register_benchmark(...)` (a
plugin module named in HARNESS_PLUGINS, or a test). Generic code never names a family: it asks the
registry (`benchmark(family)`, `benchmarks()`, `family_of(target_id)`).

The record lives in this lowest layer that knows targets, so the evaluator and the harness can both
read it. Its parts that belong to higher layers (the scorer, web panels, CLI subcommands) are
`module:attr` references, imported only by the layer that uses them (`load_ref`), so a record
never makes `function_store` import `evaluator` or `harness`.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.call_clock import CallBudget

GROUP = "interp_harness.benchmarks"

Service = Literal["backbone", "intervention"]
Interval = Literal["wilson", "t"]


@dataclass(frozen=True)
class ReportRow:
    """One row of `harness report` for the family (FIND's Table 2 rows have `table2=True`)."""

    label: str
    metric: str
    interval: Interval = "t"  # Wilson for rates of 0/1 outcomes, Student-t for means
    table2: bool = False


@dataclass(frozen=True)
class Benchmark:
    """Everything about one target family. `module:attr` strings are imported lazily by the
    layer that uses them (`load_ref`)."""

    family: str  # registry key; the family in target ids, runs and reports
    title: str  # one line for listings and docs
    # dataset name -> `module:function` source `(family, CatalogOptions) -> list[Target]`
    sources: Mapping[str, str]
    # datasets whose ids do not name the family (`neuron/<model>/<layer>:<i>`): those datasets
    # serve this family only, and their id prefix decides the family
    fixed_datasets: tuple[str, ...] = ()
    # modules that declare the family's reference data (`interp_harness.function_store.datasets.register`)
    reference_data: tuple[str, ...] = ()
    # runner kind (Target.hidden.runner) -> module that registers it with interp_harness.function_store.runtime
    runners: Mapping[str, str] = field(default_factory=dict)
    # model services its targets need; pre-flight checks each one the selection needs
    services: tuple[Service, ...] = ()
    # seconds a target call may take beyond HARNESS_SERVICE_CALL_TIMEOUT_S for its size (a
    # model-backed family's call of many texts); None: the base alone (interp_harness.function_store.call_clock)
    call_budget: CallBudget | None = None
    # `module:attr`, a mapping prompt family -> the family's own task-prompt template
    # (interp_harness.harness.episode.prompts adds FIND's shared parts: its prompt files, {DIR2FUNC}, exemplars)
    prompt: str = ""
    # the family's commands, declared once (agents/toolspec.py): protocol mode `tools` offers them
    # as tools, MCP serves them; the text protocol is their rendering. A family without them
    # runs in the text modes only.
    commands: tuple[ToolSpec, ...] = ()
    reply_decimals: int | None = None  # replies print numeric outputs with this many decimals
    # `module:attr`, an evaluator Scorer (class or instance) for this family
    scorer: str = ""
    report_rows: tuple[ReportRow, ...] = ()
    headline_metric: str | None = None  # the metric listings and the web UI show first
    # `module:function` web panels for an episode page, in order (each returns its HTML part)
    panels: tuple[str, ...] = ()
    # floor agents run beside an agent on this family's targets (e.g. `interpolation`)
    floors: tuple[str, ...] = ()
    exemplars: bool = False  # FIND's exemplar initialisation is available
    # `name -> module:typer_app` subcommands of `harness` (e.g. `harness neurons ...`)
    cli: Mapping[str, str] = field(default_factory=dict)
    docs: str = ""  # docs page, relative to the repository root
    order: int = 100  # listing and report order (FIND's Table 2 order for the built-ins)


def find_sources(module: str, prefix: str = "") -> dict[str, str]:
    """FIND's three sources of one family, as `sources` names them: `module:<prefix>find_v1`,
    `...find_gen`, `...find_import` (the released benchmark, our generator, a FIND folder)."""
    return {
        d: f"{module}:{prefix}{d.replace('-', '_')}" for d in ("find-v1", "find-gen", "find-import")
    }


class UnknownFamily(ValueError):
    pass


def unknown_name(what: str, name: str, known: Sequence[str]) -> str:
    """`unknown WHAT 'name'. Did you mean 'closest'? Known: ...` (the question only when a
    known name is close: a typo), as an unknown agent is answered."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}.{hint} Known: {', '.join(known)}"


_REGISTERED: dict[str, Benchmark] = {}
_lock = threading.Lock()
_loaded = False


def register_benchmark(record: Benchmark) -> Benchmark:
    """Register (or replace) a family's record; returns it, so a module can write
    `BENCHMARK = register_benchmark(Benchmark(...))`."""
    with _lock:
        _REGISTERED[record.family] = record
    return record


def _load_entry_points() -> None:
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        found: dict[str, Benchmark] = {}
        for ep in entry_points(group=GROUP):
            record = ep.load()
            if not isinstance(record, Benchmark):
                raise TypeError(f"entry point {ep.name} = {ep.value} is not a Benchmark record")
            found[record.family] = record
        # records registered in code (plugins, tests) win over entry points of the same family
        _REGISTERED.update({k: v for k, v in found.items() if k not in _REGISTERED})
        _loaded = True


def benchmarks() -> list[Benchmark]:
    """Every registered family, by `order` then family name."""
    _load_entry_points()
    return sorted(_REGISTERED.values(), key=lambda b: (b.order, b.family))


def families() -> list[str]:
    return [b.family for b in benchmarks()]


def benchmark(family: str) -> Benchmark:
    _load_entry_points()
    try:
        return _REGISTERED[family]
    except KeyError:
        raise UnknownFamily(unknown_name("family", family, families())) from None


def load_ref(ref: str) -> Any:
    """`pkg.mod:attr.sub` -> the object. The one place a record's references are imported."""
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def each(refs: tuple[str, ...]) -> list[Callable[..., Any]]:
    return [load_ref(r) for r in refs]
