"""Sampling string programs as FIND's generator does (`string_functions.py`), from a given RNG."""

from __future__ import annotations

import random

from interp_harness.function_store.strings.avoid import allowed
from interp_harness.function_store.strings.program import Step, StringProgram
from interp_harness.function_store.strings.registry import ATOMIC, ATOMIC_NAMES, INNER_NAMES


def sample_step(rng: random.Random, names: tuple[str, ...] = ATOMIC_NAMES) -> Step:
    name = rng.choice(names)
    return Step(name=name, args=ATOMIC[name].sample_args(rng))


def sample_atomic(rng: random.Random) -> StringProgram:
    return StringProgram(steps=[sample_step(rng)])


def sample_composed(rng: random.Random, *, fixed_avoid: bool = True) -> StringProgram:
    """outer from the 67 atomic names, inner from the 64-entry inner list, resampling the inner
    one while the avoid dict forbids the pair (`fixed_avoid=False` uses FIND's typo'd dict)."""
    outer = sample_step(rng)
    inner_name = rng.choice(INNER_NAMES)
    while not allowed(outer.name, inner_name, fixed=fixed_avoid):
        inner_name = rng.choice(INNER_NAMES)
    inner = Step(name=inner_name, args=ATOMIC[inner_name].sample_args(rng))
    return StringProgram.compose(outer, inner)
