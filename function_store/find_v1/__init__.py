"""find-v1: the released FIND benchmark rebuilt from its released metadata (`data.json`,
`func_name_dict.json`, `unit_test_data.json`, `initial.json`)."""

from __future__ import annotations

import importlib

from function_store.catalog import CatalogOptions, register_source
from function_store.models import Family, Target


@register_source("find-v1")
def load(family: Family, options: CatalogOptions) -> list[Target]:
    module = {
        "numeric": "numeric",
        "strings": "strings",
        "entities": "neural",
        "relations": "neural",
    }[family]
    return importlib.import_module(f"function_store.find_v1.{module}").load(family, options)
