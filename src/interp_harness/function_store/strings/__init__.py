"""FIND string functions: the 67 atomic functions, composition, sampling, and ground-truth text."""

from interp_harness.function_store.strings.avoid import AVOID_FIND, AVOID_FIXED
from interp_harness.function_store.strings.program import Step, StringProgram
from interp_harness.function_store.strings.registry import ATOMIC, ATOMIC_NAMES, INNER_NAMES
from interp_harness.function_store.strings.render import render_code, render_description

__all__ = [
    "ATOMIC",
    "ATOMIC_NAMES",
    "AVOID_FIND",
    "AVOID_FIXED",
    "INNER_NAMES",
    "Step",
    "StringProgram",
    "render_code",
    "render_description",
]
