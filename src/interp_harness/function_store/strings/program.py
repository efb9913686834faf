"""A string target's definition: a chain of atomic functions, applied first to last.

An atomic FIND function is one step; a composed one, `function1(function2(s))`, is the two steps
`[function2, function1]`. This is what `HiddenTruth.spec` holds for runner "string".
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from interp_harness.function_store.strings.registry import ATOMIC


class Step(BaseModel):
    name: str
    args: list[Any] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known(self) -> Step:
        if self.name not in ATOMIC:
            raise ValueError(f"unknown atomic string function {self.name!r}")
        ATOMIC[self.name].check_args(self.args)
        return self

    @property
    def stochastic(self) -> bool:
        return ATOMIC[self.name].stochastic

    def apply(self, s: str, rng: random.Random) -> str:
        spec = ATOMIC[self.name]
        if spec.stochastic:
            return spec.fn(s, rng)
        return spec.fn(s, *self.args)

    def label(self) -> str:
        """FIND-style name with parameters, e.g. `advance_by_character_order(5)`."""
        return f"{self.name}({', '.join(repr(a) for a in self.args)})"


class StringProgram(BaseModel):
    steps: list[Step]

    @field_validator("steps")
    @classmethod
    def _non_empty(cls, v: list[Step]) -> list[Step]:
        if not 1 <= len(v) <= 2:
            raise ValueError("a string program has one (atomic) or two (composed) steps")
        return v

    @classmethod
    def atomic(cls, name: str, *args: Any) -> StringProgram:
        return cls(steps=[Step(name=name, args=list(args))])

    @classmethod
    def compose(cls, outer: Step, inner: Step) -> StringProgram:
        """FIND's compose_1input_1input: outer(inner(s))."""
        return cls(steps=[inner, outer])

    @property
    def kind(self) -> str:
        return "atomic" if len(self.steps) == 1 else "composed"

    @property
    def stochastic(self) -> bool:
        return any(s.stochastic for s in self.steps)

    def __call__(self, s: str, rng: random.Random | None = None) -> str:
        rng = rng or random.Random()
        for step in self.steps:
            s = step.apply(s, rng)
        return s

    def key(self) -> tuple[str, ...]:
        """Identity for duplicate exclusion: names and parameters, in order."""
        import json

        return tuple(json.dumps([s.name, s.args], sort_keys=True) for s in self.steps)
