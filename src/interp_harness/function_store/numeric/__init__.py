"""FIND numeric functions: formulas, variants (noise, corruption, MLP), source text and runners.

Importing this package does not import torch; only MLP weight loading and training do.
"""

from interp_harness.function_store.numeric.families import (
    ATOMIC_FAMILIES,
    COMPOSE_FAMILIES,
    COMPOSE_OPS,
    SpecError,
    clean_program,
    domain_for,
)
from interp_harness.function_store.numeric.source_text import render_mlp_source, render_source
from interp_harness.function_store.numeric.variants import (
    CORRUPTION_TYPES,
    NOISE_TYPES,
    served_program,
)

__all__ = [
    "ATOMIC_FAMILIES",
    "COMPOSE_FAMILIES",
    "COMPOSE_OPS",
    "CORRUPTION_TYPES",
    "NOISE_TYPES",
    "SpecError",
    "clean_program",
    "domain_for",
    "render_mlp_source",
    "render_source",
    "served_program",
]
