"""find-gen: our procedural generator, the "living benchmark" (deterministic per seed and options)."""

from __future__ import annotations

import importlib

from function_store.catalog import CatalogOptions, register_source
from function_store.models import Family, Target


@register_source("find-gen")
def load(family: Family, options: CatalogOptions) -> list[Target]:
    module = {
        "numeric": "numeric",
        "strings": "strings",
        "entities": "neural",
        "relations": "neural",
    }[family]
    return importlib.import_module(f"function_store.find_gen.{module}").load(family, options)
