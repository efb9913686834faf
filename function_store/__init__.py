"""Targets: definitions, generators, dataset import, the catalog and the target service."""

from function_store.catalog import Catalog, CatalogOptions, GenConfig, UnknownTarget
from function_store.models import (
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
