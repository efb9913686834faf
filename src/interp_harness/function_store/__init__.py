"""Targets: definitions, generators, dataset import, the catalog and the target service."""

from interp_harness.function_store.catalog import Catalog, CatalogOptions, GenConfig, UnknownTarget
from interp_harness.function_store.models import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    PublicTarget,
    Target,
    UnitTest,
)

__all__ = [
    "CallOutput",
    "Catalog",
    "CatalogOptions",
    "GenConfig",
    "HiddenTruth",
    "PublicMeta",
    "PublicTarget",
    "Target",
    "UnitTest",
    "UnknownTarget",
]
