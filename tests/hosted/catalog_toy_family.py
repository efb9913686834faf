"""A family no generic module knows: its catalog source and runner, registered only through the
record test_catalog_plugin.py gives `register_benchmark` (imported lazily by the catalog and the
runtime, never by name)."""

from __future__ import annotations

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.models import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    Target,
    make_canary,
)
from interp_harness.function_store.runtime import RuntimeContext, register_runner


def _target(dataset: str, tid: str, i: int) -> Target:
    return Target(
        id=tid,
        dataset=dataset,
        family="toy",
        variant="clean",
        public=PublicMeta(input_kind="word", prompt_family="toy"),
        hidden=HiddenTruth(runner="toy", spec={"i": i}, canary=make_canary(tid)),
    )


def load(family: str, options: CatalogOptions) -> list[Target]:
    return [_target("toy-set", f"toy-set/{family}/f{i:05d}", i) for i in range(3)]


def load_fixed(family: str, options: CatalogOptions) -> list[Target]:
    return [_target("toyfix", f"toyfix/m/{i}", i) for i in range(2)]


class _Upper:
    def call(self, inputs: list[str]) -> list[CallOutput]:
        return [CallOutput(input=s, output=s.upper()) for s in inputs]


@register_runner("toy")
def _runner(target: Target, ctx: RuntimeContext) -> _Upper:
    return _Upper()
